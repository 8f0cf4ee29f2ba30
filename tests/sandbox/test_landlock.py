"""The Landlock fallback, run for real with bubblewrap out of the picture."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from caretz.sandbox.landlock_rules import landlock_rules, readable_entries
from caretz.sandbox.policy import SandboxMode
from tests.sandbox.conftest import SECRET_KEY
from tests.sandbox.helpers import run_in

REPO = Path(__file__).resolve().parents[2]


def test_the_command_runs_without_bwrap(make_policy, landlock_sandbox):
    sandbox = landlock_sandbox(make_policy())
    argv = sandbox.command(["true"])
    assert argv[0] == sys.executable and "bwrap" not in " ".join(argv[:4])
    result = run_in(sandbox, "cat /proc/$$/status | grep -E '^(NoNewPrivs|Seccomp):'; echo ok")
    assert "NoNewPrivs:\t1" in result.stdout and result.stdout.endswith("ok\n")


def test_writes_inside_roots_work_and_outside_fail(make_policy, landlock_sandbox, work, scratch):
    extra = scratch / "extra"
    extra.mkdir()
    result = run_in(
        landlock_sandbox(make_policy(add_dirs=[extra])),
        f"echo a > in.txt; echo b > {extra}/b.txt; echo c > {scratch}/out.txt;"
        " echo d > ../escape.txt; touch /tmp/landlock-escape",
    )
    assert (work / "in.txt").read_text() == "a\n"
    assert (extra / "b.txt").read_text() == "b\n"
    assert not (scratch / "out.txt").exists()
    assert not (scratch / "escape.txt").exists()
    assert not Path("/tmp/landlock-escape").exists()
    assert result.stderr.count("Permission denied") == 3


def test_read_only_mode_writes_nowhere(make_policy, landlock_sandbox, work):
    result = run_in(landlock_sandbox(make_policy(mode=SandboxMode.READ_ONLY)), "cat README; : > x")
    assert result.stdout == "hello"
    assert not (work / "x").exists()


def test_the_session_tmpdir_is_shared_and_removed_at_the_end(make_policy, landlock_sandbox):
    sandbox = landlock_sandbox(make_policy())
    result = run_in(sandbox, 'echo x > "$TMPDIR/f" && echo "$TMPDIR"')
    tmpdir = Path(result.stdout.strip())
    assert tmpdir == sandbox.runtime.tmp_dir(), result.stderr
    assert run_in(sandbox, 'cat "$TMPDIR/f"').stdout == "x\n"  # the next command sees it
    sandbox.close()
    assert not tmpdir.exists()


def test_hidden_paths_outside_roots_are_unreadable(make_policy, landlock_sandbox, scratch):
    config = scratch / "caretz-config"
    config.mkdir()
    (config / "profiles.json").write_text("caretz settings")
    result = run_in(
        landlock_sandbox(make_policy(caretz_dirs=[config])),
        f"cat ~/.ssh/id_rsa ~/.netrc ~/.aws/credentials {config}/profiles.json; cat ~/.bashrc",
    )
    assert SECRET_KEY not in result.stdout
    assert "password" not in result.stdout and "caretz settings" not in result.stdout
    assert result.stdout == "ordinary dotfile"  # the control: the rest of HOME reads fine


def test_no_capabilities_and_no_access_to_caretz_environment(work, home, landlock_abi):
    """caretz holds the API keys in its environment; a command must not read them there."""
    script = (
        "grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status;"
        ' cat /proc/"$CARETZ_PID"/environ 2>&1 | tr "\\0" "\\n" | grep -c PROBE_SECRET;'
        " cat /proc/sys/kernel/hostname > /proc/sys/kernel/hostname && echo sysctl-written"
    )
    spec = json.dumps({"cwd": str(work), "home": str(home), "backend": "landlock"})
    caretz = subprocess.run(
        [sys.executable, "-c", _PROBE, spec, script],
        cwd=REPO,
        env=dict(os.environ, PROBE_SECRET="sk-probe-secret"),
        capture_output=True,
        text=True,
        timeout=30,
    )
    lines = caretz.stdout.splitlines()
    assert lines[:3] == [
        "CapPrm:\t0000000000000000",
        "CapEff:\t0000000000000000",
        "CapBnd:\t0000000000000000",
    ], caretz.stderr
    assert lines[3] == "0"  # not one line of caretz's environment was readable
    assert "sysctl-written" not in caretz.stdout


# Opens a Landlock sandbox the way caretz does, then runs one command with the
# opener's PID in CARETZ_PID.
_PROBE = """
import json, os, subprocess, sys
from pathlib import Path
from caretz.sandbox.detect import BwrapProbe, check_sandbox
from caretz.sandbox.policy import build_policy
from caretz.sandbox.runner import open_sandbox
spec = json.loads(sys.argv[1])
policy = build_policy(cwd=Path(spec["cwd"]), home=Path(spec["home"]))
check = check_sandbox(policy.mode, bwrap=BwrapProbe(None, False, "not found on PATH"))
sandbox = open_sandbox(policy, check)
env = dict(os.environ, CARETZ_PID=str(os.getpid()))
launch = sandbox.launch(["bash", "-c", sys.argv[2]], env)
subprocess.run(launch.argv, cwd=launch.cwd, env=launch.env, pass_fds=launch.pass_fds)
"""


def test_git_paths_are_not_protected_and_say_so(make_policy, work):
    rules = landlock_rules(make_policy())
    assert work / ".git" / "hooks" in rules.uncovered
    assert work / ".git" / "config" in rules.uncovered


def test_readable_entries_skip_hidden_paths_and_their_parents(tmp_path):
    (tmp_path / "home" / ".ssh").mkdir(parents=True)
    (tmp_path / "home" / ".bashrc").write_text("")
    (tmp_path / "home" / "link").symlink_to(tmp_path / "home" / ".ssh")
    (tmp_path / "other").mkdir()
    entries = readable_entries([tmp_path / "home" / ".ssh"], top=tmp_path)
    assert entries == [tmp_path / "home" / ".bashrc", tmp_path / "other"]
    assert readable_entries([], top=tmp_path) == [tmp_path]
