"""`caretz schedule` through the real `crontab` binary, and the installed command run as cron
would run it, doing a guarded run against the loopback server.

No test touches the crontab of whoever runs the suite: `CARETZ_CRONTAB` points caretz
at the real crontab binary run inside bubblewrap with a private spool folder mounted
over the system's, and each test checks that the real `crontab -l` reads the same
before and after. Both binaries are required: a test fails, never skips, without them.
"""

from __future__ import annotations

import getpass
import json
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from caretz.schedule.crontab import cron_daemon_running
from tests.e2e.conftest import AGENT_MODEL, API_KEY, Caretz
from tests.modelserver import ModelServer, text, tool

JUDGE = "guard-judge"
PROMPT = "run the db tests and keep 100% green"
USERS_LINE = "0 3 * * * /usr/local/bin/backup --all > /dev/null 2>&1\n"
FAILING = "echo 'db_test.go:12: undefined: testDB' >&2; exit 1"
NOT_STUCK = {"stuck": False, "confidence": 0.3, "reason": "early days", "try_instead": ""}


def real_crontab() -> tuple[int, str, str]:
    """What the real crontab command says of the real user's table (no override)."""
    env = {k: v for k, v in os.environ.items() if k != "CARETZ_CRONTAB"}
    done = subprocess.run(["crontab", "-l"], capture_output=True, text=True, env=env, timeout=30)
    return done.returncode, done.stdout, done.stderr


@dataclass
class PrivateCrontab:
    command: Path  # the wrapper CARETZ_CRONTAB names
    spool: Path

    def table(self) -> str:
        done = subprocess.run([str(self.command), "-l"], capture_output=True, text=True)
        return done.stdout if done.returncode == 0 else ""

    def install(self, table: str) -> None:
        subprocess.run([str(self.command), "-"], input=table, text=True, check=True)

    @property
    def env(self) -> dict[str, str]:
        return {"CARETZ_CRONTAB": str(self.command)}


@pytest.fixture
def private_crontab(tmp_path: Path):
    crontab, bwrap = shutil.which("crontab"), shutil.which("bwrap")
    if crontab is None:
        pytest.fail("these tests need the crontab command: apt install cron")
    if bwrap is None:
        pytest.fail("these tests need bubblewrap for a private crontab: apt install bubblewrap")
    spool = tmp_path / "spool"
    spool.mkdir()
    wrapper = tmp_path / "private-crontab"
    wrapper.write_text(
        "#!/bin/sh\n"
        f"exec {bwrap} --bind / / --bind {spool} /var/spool/cron/crontabs "
        f'--dev /dev --proc /proc {crontab} "$@"\n'
    )
    wrapper.chmod(0o755)
    return PrivateCrontab(wrapper, spool)


@pytest.fixture
def keys(caretz: Caretz, server: ModelServer) -> Path:
    """The env file a job reads its key from: schedule.env beside profiles.json, chmod 600."""
    path = Path(os.environ["CARETZ_CONFIG"]).parent / "schedule.env"
    path.write_text(f"ANTHROPIC_API_KEY={API_KEY}\nANTHROPIC_BASE_URL={server.url}\n")
    path.chmod(0o600)
    return path


def guarded_script(server: ModelServer) -> None:
    """One run: the same failure three times (the judge is asked), then an answer."""
    server.add(*[tool("bash", command=FAILING) for _ in range(3)], text("testDB is undefined."))
    server.add(text(json.dumps(NOT_STUCK)), model=JUDGE)


def test_add_list_run_remove_round_trip_through_the_real_crontab(
    caretz: Caretz, server: ModelServer, private_crontab: PrivateCrontab, keys: Path, workspace
):
    before = real_crontab()
    private_crontab.install(USERS_LINE)
    env = private_crontab.env
    guard = ["--loop-guard", "active", "--loop-guard-model", f"anthropic/{JUDGE}",
             "--loop-guard-check-every", "7"]  # fmt: skip

    added = caretz(*guard, "schedule", "add", "*/10 * * * *", "-p", PROMPT, env=env)

    assert added.code == 0, added.stderr
    assert ("no cron daemon is running" in added.stderr) == (cron_daemon_running() is False)
    job_id = added.stdout.split()[2].rstrip(":")
    table = private_crontab.table()
    assert table.startswith(USERS_LINE)  # every other line kept
    (line,) = [entry for entry in table.splitlines() if entry.endswith(f"# caretz-job:{job_id}")]
    assert line.startswith(f"*/10 * * * * cd {workspace} && ")
    assert f"CARETZ_DATA_DIR={caretz.data_dir}" in line
    assert f"{shlex.quote(sys.executable)} -m caretz --job {job_id}" in line
    assert f"--env-file {keys}" in line
    pinned = json.loads(line.split("--loop-guard-config '")[1].split("'")[0])
    assert pinned["mode"] == "active" and pinned["checkEvery"] == 7
    assert pinned["judge"]["model"] == f"anthropic/{JUDGE}"
    assert API_KEY not in table and "sk-ant" not in table
    assert "keep 100\\% green" in line  # cron would turn a bare % into a newline

    guarded_script(server)
    ran = caretz("schedule", "run", job_id, env=env)

    assert ran.code == 0, ran.stderr
    assert f"job {job_id} ran: exit 0" in ran.stdout
    assert "[loop-guard] judging: repeat: 3×" in ran.stderr  # the run's own output, from its log
    assert len(server.requests_for(JUDGE)) == 1
    listed = caretz("schedule", "list", env=env)
    assert listed.code == 0, listed.stderr
    assert f"{job_id}  */10 * * * *  in {workspace}" in listed.stdout
    assert f"-p {PROMPT!r}" in listed.stdout
    sessions = sorted((caretz.data_dir / "sessions").iterdir())
    session_id = sessions[-1].name
    assert f"exit 0 · session {session_id}" in listed.stdout
    events = caretz.events(session_id)
    assert events[1] == {**events[1], "type": "Schedule.Run", "job": job_id}
    assert events[0]["loop_guard"] == "active"

    # A later profile edit that would unguard every run does not reach the job: the
    # installed command, taken from `crontab -l` and run the way cron runs it (sh, a
    # bare environment, `\%` unescaped), is still guarded.
    caretz.write_config({"profiles": {"general": {"loopGuard": {"mode": "off", "models": []}}}})
    guarded_script(server)
    command = line.split(" ", 5)[5].rsplit(" # caretz-job:", 1)[0].replace("\\%", "%")
    direct = subprocess.run(
        ["/bin/sh", "-c", command], env={"HOME": str(workspace), "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert direct.returncode == 0, (caretz.data_dir / "schedule" / f"{job_id}.log").read_text()
    assert len(server.requests_for(JUDGE)) == 2
    assert server.requests_for(AGENT_MODEL)[-1].messages[0]["content"] == PROMPT

    removed = caretz("schedule", "remove", job_id, env=env)
    assert removed.code == 0 and private_crontab.table() == USERS_LINE
    assert (
        caretz("schedule", "list", env=env).stdout
        == "no scheduled jobs (add one with: caretz schedule add)\n"
    )
    assert real_crontab() == before


def test_a_scheduled_goal_run_carries_its_goal(
    caretz: Caretz, server: ModelServer, private_crontab: PrivateCrontab, keys: Path
):
    before = real_crontab()
    env = private_crontab.env
    added = caretz("--goal-model", "anthropic/evaluator", "schedule", "add", "@hourly",
                   "-p", "check the nightly build", "--goal", "the build is green", env=env)  # fmt: skip
    assert added.code == 0, added.stderr
    job_id = added.stdout.split()[2].rstrip(":")
    server.add(text("The build is green."))
    verdict = {"met": True, "impossible": False, "reason": "it says green", "next_step": ""}
    server.add(text(json.dumps(verdict)), model="evaluator")

    ran = caretz("schedule", "run", job_id, env=env)

    assert ran.code == 0, ran.stderr
    assert "[goal] goal met after 1 turn: it says green" in ran.stderr
    assert "exit 0" in caretz("schedule", "list", env=env).stdout
    assert real_crontab() == before


def test_bad_input_exits_2_with_one_line_and_leaves_the_crontab_alone(
    caretz: Caretz, server: ModelServer, private_crontab: PrivateCrontab, keys: Path
):
    before = real_crontab()
    private_crontab.install(USERS_LINE)
    env = private_crontab.env
    cases = {
        ("61 * * * *", "-p", "x"): "bad minute '61': 61 is outside 0-59",
        ("* * *", "-p", "x"): "has 3 fields; a schedule has 5",
        ("@every5m", "-p", "x"): "is not a cron macro",
        ("5/10 * * * *", "-p", "x"): "a step needs * or a range before it",
        ("@daily", "-p", "  "): "-p is empty",
        ("@daily", "-p", "two\nlines"): "-p must be one line",
        ("@daily", "-p", "x", "--goal", ""): "--goal is empty",
        ("@daily", "-p", "x", "--dir", "/nonexistent/dir"): "--dir /nonexistent/dir",
    }
    for args, words in cases.items():
        run = caretz("schedule", "add", *args, env=env)
        assert run.code == 2, (args, run.stderr)
        assert run.stderr.count("\n") == 1 and words in run.stderr, (args, run.stderr)
    unknown = caretz("--goal-model", "nowhere/x", "schedule", "add", "@daily", "-p", "x",
                     "--goal", "done", env=env)  # fmt: skip
    assert unknown.code == 2 and "--goal-model: unknown provider 'nowhere'" in unknown.stderr
    assert private_crontab.table() == USERS_LINE
    assert server.requests == []
    assert real_crontab() == before


def test_the_key_must_come_from_a_private_env_file(
    caretz: Caretz, private_crontab: PrivateCrontab, tmp_path: Path
):
    before = real_crontab()
    env = private_crontab.env

    missing = caretz("schedule", "add", "@daily", "-p", "x", env=env)
    loose = tmp_path / "loose.env"
    loose.write_text(f"ANTHROPIC_API_KEY={API_KEY}\n")
    loose.chmod(0o644)
    readable = caretz("schedule", "add", "@daily", "-p", "x", "--env-file", str(loose), env=env)

    assert missing.code == 2 and "the job needs ANTHROPIC_API_KEY" in missing.stderr
    assert "schedule.env (chmod 600)" in missing.stderr
    assert readable.code == 2 and f"run: chmod 600 {loose}" in readable.stderr
    assert private_crontab.table() == ""
    assert real_crontab() == before


def test_a_refused_table_leaves_the_installed_one_intact(
    caretz: Caretz, private_crontab: PrivateCrontab, keys: Path
):
    before = real_crontab()
    # A table crontab itself would refuse (written straight into the private spool).
    broken = USERS_LINE + "this is not a cron line\n"
    spool_file = private_crontab.spool / getpass.getuser()
    spool_file.write_text(broken)
    spool_file.chmod(0o600)

    run = caretz("schedule", "add", "@daily", "-p", "x", env=private_crontab.env)

    assert run.code == 1
    assert run.stderr.startswith("caretz: crontab refused the new table, so yours is unchanged")
    assert run.stderr.count("\n") == 1
    assert spool_file.read_text() == broken
    assert real_crontab() == before


def test_without_crontab_one_line_names_the_package(caretz: Caretz, tmp_path: Path):
    empty = tmp_path / "bin"
    empty.mkdir()

    run = caretz("schedule", "list", env={"PATH": str(empty), "CARETZ_CRONTAB": None})  # type: ignore[dict-item]

    assert run.code == 2
    assert run.stderr == "caretz: crontab not found: install the cron package (apt install cron)\n"


SCHEDULES = [
    "*/10 * * * *", "0 3 * * *", "5,35 8-18 * * mon", "0 0 1 jan *", "0 0 * * 0-7",
    "1-59/2 * * * *", "0 */4 1,15 * 1-5", "@daily", "@reboot", "@hourly",
    "61 * * * *", "* 24 * * *", "* * 0 * *", "* * * 13 *", "* * * * 8", "5/10 * * * *",
    "*/0 * * * *", "9-3 * * * *", "* * *", "* * * * * *x", "@every5m", "a * * * *",
    "jan-mar * * * *", "0 0 * * mon-fri", "0 0 * * mon-fri/2", "0 0 * Jan,mar *", "0 0 * * 7-1",
    "0 0 * * sun-7", "0 0 * * funday",
]  # fmt: skip


def test_our_schedule_check_agrees_with_crontab(private_crontab: PrivateCrontab):
    from caretz.schedule.cron import check_schedule

    before = real_crontab()
    disagreements = []
    for schedule in SCHEDULES:
        try:
            check_schedule(schedule)
            ours = True
        except ValueError:
            ours = False
        done = subprocess.run(
            [str(private_crontab.command), "-"], input=f"{schedule} /bin/true\n", text=True,
            capture_output=True,
        )  # fmt: skip
        if ours != (done.returncode == 0):
            disagreements.append((schedule, ours, done.stderr.strip()))

    assert disagreements == []
    assert real_crontab() == before
