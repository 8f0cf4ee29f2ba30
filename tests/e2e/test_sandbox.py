"""The sandbox end to end: the real `caretz` CLI, the loopback model server scripting the
tool calls, real bubblewrap. Escape attempts through bash and through every file tool,
the network, the key filter, orphans after caretz is killed, background jobs, timeouts,
resuming after a crash, and `caretz sandbox check`.

The workspace and the temporary HOME live under /var/tmp, which a command sees read-only
(its /tmp is private), so `../escape.txt` really tries the host's filesystem. A test that
needs bwrap fails where it is missing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from caretz.session.store import OUTCOME_UNKNOWN
from tests.e2e.conftest import API_KEY, Caretz, Run
from tests.e2e.sandbox_folders import project_folder, require, scratch_folder
from tests.modelserver import calls, text, tool
from tests.sandbox.helpers import kill_all, marker, sleepers, wait_for

SECRET_KEY = "-----BEGIN OPENSSH PRIVATE KEY----- test-material"


@pytest.fixture(autouse=True)
def bwrap_installed() -> None:
    require("bwrap")


@pytest.fixture
def scratch() -> Iterator[Path]:
    yield from scratch_folder("caretz-e2e-sbx-")


@pytest.fixture
def workspace(scratch: Path) -> Path:
    return project_folder(scratch)


@pytest.fixture
def home(scratch: Path) -> Path:
    home = scratch / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(SECRET_KEY)
    (home / ".bashrc").write_text("# ordinary dotfile\n")
    return home


@pytest.fixture
def outside(scratch: Path) -> Path:
    folder = scratch / "outside"
    folder.mkdir()
    return folder


@pytest.fixture
def sandboxed(caretz: Caretz, home: Path) -> Caretz:
    caretz.env["HOME"] = str(home)
    return caretz


def results(caretz: Caretz, run: Run) -> list[dict[str, Any]]:
    return [e for e in caretz.events(run.session_id) if e["type"] == "Tool.Result"]


# -- escapes through bash ---------------------------------------------------------------


def test_bash_cannot_write_outside_or_read_credentials(sandboxed, server, workspace, home, outside):
    private_tmp = Path(f"/tmp/caretz-outside-{uuid.uuid4().hex}.txt")
    (workspace / "linked").symlink_to(outside)
    script = "; ".join(
        [
            "echo in > inside.txt",
            f"echo a > {private_tmp} && cat {private_tmp}",
            "echo b > ../escape.txt",
            "echo c > ~/evil.txt",
            "echo d > linked/planted.txt",
            "cat ~/.ssh/id_rsa; ls -A ~/.ssh",
            'echo "key=[$ANTHROPIC_API_KEY]"',
            "true",
        ]
    )
    server.add(tool("bash", command=script), text("done"))

    run = sandboxed("-p", "try everything")

    assert run.code == 0, run.stderr
    assert (workspace / "inside.txt").read_text() == "in\n"
    assert not private_tmp.exists()  # it was written, in the command's own /tmp
    assert not (workspace.parent / "escape.txt").exists()
    assert not (home / "evil.txt").exists() and not (outside / "planted.txt").exists()
    (result,) = results(sandboxed, run)
    output = result["output"]
    assert "a\n" in output  # the private /tmp works
    assert output.count("Read-only file system") == 3
    assert SECRET_KEY not in output
    assert "id_rsa: No such file or directory" in output  # ~/.ssh is an empty directory
    assert "key=[]" in output and API_KEY not in output
    log = (sandboxed.data_dir / "sessions" / run.session_id / "events.jsonl").read_text()
    assert API_KEY not in log and SECRET_KEY not in log


def test_add_dir_is_writable_and_read_only_mode_writes_nowhere(
    sandboxed, server, workspace, outside
):
    server.add(tool("bash", command=f"echo x > {outside}/added.txt"), text("done"))
    assert sandboxed("-p", "go", "--add-dir", str(outside)).code == 0
    assert (outside / "added.txt").read_text() == "x\n"

    server.add(tool("bash", command="echo y > inside.txt"), text("done"))
    run = sandboxed("-p", "go", env={"CARETZ_SANDBOX": "read-only"})
    assert "Read-only file system" in results(sandboxed, run)[0]["output"]
    assert not (workspace / "inside.txt").exists()


# -- escapes through the file tools -----------------------------------------------------


def test_file_tools_cannot_write_outside_or_read_credentials(
    sandboxed, server, workspace, home, outside
):
    sandboxed.write_config({"profiles": {"general": {"sandbox": {"readOnly": [".env"]}}}})
    (workspace / ".env").write_text("SECRET=1\n")
    (workspace / "link.txt").symlink_to(".env")
    (workspace / "linked").symlink_to(outside)
    tmp_target = f"/tmp/caretz-outside-{uuid.uuid4().hex}.txt"
    attempts = [
        ("write", {"path": tmp_target, "content": "x"}),
        ("write", {"path": "../escape.txt", "content": "x"}),
        ("write", {"path": "~/evil.txt", "content": "x"}),
        ("write", {"path": "linked/planted.txt", "content": "x"}),
        ("edit", {"path": "~/.bashrc", "old_string": "ordinary", "new_string": "evil"}),
        ("read", {"path": "~/.ssh/id_rsa"}),
        ("write", {"path": "link.txt", "content": "SECRET=stolen\n"}),
        ("edit", {"path": "link.txt", "old_string": "SECRET=1", "new_string": "SECRET=2"}),
        # Dotfiles included: the hidden paths stay out all the same.
        ("grep", {"pattern": "PRIVATE KEY", "path": str(home), "include_ignored": True}),
        ("glob", {"pattern": "**/*", "path": str(home), "include_ignored": True}),
    ]
    server.add(calls(*attempts), text("done"))

    run = sandboxed("-p", "try the file tools")

    assert run.code == 0, run.stderr
    outputs = [r["output"] for r in results(sandboxed, run)]
    refusals, searches = outputs[:8], outputs[8:]
    for attempt, output in zip(attempts, refusals, strict=False):
        assert output.startswith("refused: ") and "\n" not in output, (attempt, output)
    assert "outside the writable roots" in refusals[1] and "hidden by the sandbox" in refusals[5]
    assert ".env is read-only in the sandbox" in refusals[6]
    assert not Path(tmp_target).exists() and not (workspace.parent / "escape.txt").exists()
    assert not (home / "evil.txt").exists() and not (outside / "planted.txt").exists()
    assert (home / ".bashrc").read_text() == "# ordinary dotfile\n"
    assert (workspace / ".env").read_text() == "SECRET=1\n"
    assert searches[0].startswith("No matches")  # ~/.ssh is skipped, not searched
    assert ".bashrc" in searches[1] and ".ssh" not in searches[1]


# -- the network ------------------------------------------------------------------------

FETCH = (
    'python3 -c "import urllib.request; '
    "print(urllib.request.urlopen('{url}/health', timeout=5).status)\""
)


def test_the_network_is_off_unless_allowed(sandboxed, server):
    server.add(tool("bash", command=FETCH.format(url=server.url)), text("done"))
    refused = results(sandboxed, sandboxed("-p", "fetch"))[0]
    assert not refused["ok"] and "Connection refused" in refused["output"]

    sandboxed.write_config({"profiles": {"general": {"sandbox": {"network": True}}}})
    server.add(tool("bash", command=FETCH.format(url=server.url)), text("done"))
    allowed = results(sandboxed, sandboxed("-p", "fetch"))[0]
    assert allowed["ok"] and allowed["output"].strip() == "200"


# -- processes --------------------------------------------------------------------------


def start_caretz(caretz: Caretz, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "caretz", *args],
        cwd=caretz.workspace,
        env=caretz.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("sandbox", ["workspace-write", "off"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL])
def test_nothing_a_command_or_job_started_outlives_caretz(sandboxed, server, sandbox, signum):
    marks = [marker() for _ in range(4)]
    command = f"sleep {marks[0]} & setsid sleep {marks[1]} & sleep {marks[2]}"
    server.add(
        tool("bash", command=f"setsid sleep {marks[3]}", background=True),
        tool("bash", command=command),
    )
    # Without the sandbox `auto` asks before every command, and nobody can answer a
    # headless run: yolo is the mode that runs commands unsandboxed without asking.
    mode = ["--permission-mode", "yolo"] if sandbox == "off" else []
    process = start_caretz(sandboxed, "-p", "wait", "--sandbox", sandbox, *mode)
    found = lambda: [pid for mark in marks for pid in sleepers(mark)]  # noqa: E731
    try:
        assert wait_for(lambda: len(found()) == 4, timeout=30), "the command never started"
        process.send_signal(signum)
        process.communicate(timeout=30)
        assert wait_for(lambda: not found(), timeout=30), f"left behind: {found()}"
    finally:
        kill_all(found())
        process.kill()


def test_background_jobs_are_read_stopped_and_stopped_at_the_end(sandboxed, server):
    first, second = marker(), marker()
    server.add(
        tool("bash", command=f"echo ready; sleep {first}", background=True),
        tool("job_output", job_id="j1", wait=10),
        tool("job_stop", job_id="j1"),
        tool("bash", command=f"sleep {second}", background=True),
        text("the second job is still running"),
    )

    run = sandboxed("-p", "run the servers")

    assert run.code == 0, run.stderr
    started, read, stopped, left = (r["output"] for r in results(sandboxed, run))
    assert started.startswith("Started background job j1: echo ready")
    assert read.splitlines()[0].startswith("job j1 · running") and "ready" in read
    assert stopped.startswith("Stopped job j1.")
    assert left.startswith("Started background job j2")
    events = sandboxed.events(run.session_id)
    assert [e["jobs"] for e in events if e["type"] == "Jobs.Stopped"] == [["j2"]]
    assert wait_for(lambda: not sleepers(first), timeout=30), "job_stop left it running"
    assert wait_for(lambda: not sleepers(second), timeout=30), "the session's end left it running"


def test_a_timeout_says_so_with_the_partial_output(sandboxed, server):
    # 3 s: time enough, on a busy machine, for the sandbox to start and `echo` to run.
    server.add(tool("bash", command="echo begun; sleep 30", timeout=3), text("too slow"))

    run = sandboxed("-p", "wait")

    (result,) = results(sandboxed, run)
    assert result["output"] == (
        "begun\n[timed out after 3 s; the command and everything it started were killed]"
    )
    assert result["exit_code"] is None and result["ended_by"] == "timeout"
    # The time shown is the time it took, which the machine's speed adds to.
    assert re.search(r"bash echo begun; sleep 30 \(\d+\.\ds timed out\)", run.stderr)
    assert "exit -15" not in run.stderr


def test_resuming_after_caretz_was_killed_mid_command_says_the_outcome_is_unknown(
    sandboxed, server, workspace
):
    server.add(tool("bash", command="touch started.txt; sleep 300"))
    process = start_caretz(sandboxed, "-p", "deploy")
    try:
        assert wait_for(lambda: (workspace / "started.txt").exists(), timeout=30)
        process.kill()
        process.communicate(timeout=30)
    finally:
        process.kill()
    (session_id,) = os.listdir(sandboxed.data_dir / "sessions")
    server.add(text("It may have run; I will check first."))

    run = sandboxed("--resume", session_id, "-p", "what happened?")

    assert run.code == 0, run.stderr
    tool_answer = server.requests[-1].messages[-2]["content"][0]
    assert tool_answer["type"] == "tool_result" and tool_answer["content"] == OUTCOME_UNKNOWN


# -- start-up and `caretz sandbox check` --------------------------------------------------


def test_sandbox_check_says_what_is_enforced(sandboxed, workspace):
    shown = sandboxed("sandbox", "check")
    assert shown.code == 0, shown.stderr
    assert "commands run with: bubblewrap" in shown.stdout
    assert "enforced: network: off" in shown.stdout
    assert f"writable: {workspace.resolve()}" in shown.stdout

    as_json = sandboxed("--sandbox", "read-only", "sandbox", "check", "--output", "json")
    data = json.loads(as_json.stdout)
    assert (data["backend"], data["mode"], data["writable_roots"]) == ("bwrap", "read-only", [])


def test_without_bubblewrap_landlock_takes_over_and_says_so(sandboxed, server, scratch, workspace):
    bin_dir = scratch / "bin"
    bin_dir.mkdir()
    for program in ("bash", "cat"):
        (bin_dir / program).symlink_to(shutil.which(program) or program)
    server.add(tool("bash", command="echo in > inside.txt; echo b > ../escape.txt"), text("ok"))

    run = sandboxed("-p", "go", env={"PATH": str(bin_dir)})

    assert run.code == 0, run.stderr
    assert "sandbox: bubblewrap is unusable (not found on PATH); commands run under Landlock" in (
        run.stderr
    )
    assert (workspace / "inside.txt").exists() and not (workspace.parent / "escape.txt").exists()
    check = sandboxed("sandbox", "check", env={"PATH": str(bin_dir)})
    assert check.code == 0 and "commands run with: Landlock (fallback)" in check.stdout


def test_a_root_that_is_not_a_directory_stops_at_start(sandboxed, server, workspace):
    run = sandboxed("-p", "go", "--add-dir", str(workspace / "README.md"))
    assert run.code == 2
    assert run.stderr.strip().startswith("caretz: sandbox: sandbox root ")
    assert server.requests == []
