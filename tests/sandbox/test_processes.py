"""Nothing a sandboxed command starts outlives it, nor caretz: checked from outside in /proc."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from caretz.sandbox.detect import check_sandbox
from caretz.sandbox.policy import SandboxMode
from caretz.sandbox.runner import open_sandbox
from caretz.tools.base import ToolContext
from caretz.tools.bash import BashTool
from tests.sandbox.helpers import kill_all, marker, run_in, sleepers, wait_for

REPO = Path(__file__).resolve().parents[2]


def _escapes(marks: list[str]) -> str:
    """Background jobs in every form that leaves the parent's process group or session."""
    a, b, c, d = marks
    return (
        f"sleep {a} & nohup sleep {b} >/dev/null 2>&1 & setsid sleep {c} &"
        f" (setsid sh -c 'sleep {d} &' &) ; sleep 0.3; echo started"
    )


def _all_sleepers(marks: list[str]) -> list[int]:
    return [pid for mark in marks for pid in sleepers(mark)]


def test_without_a_sandbox_background_jobs_survive():
    """The control: the orphan check below does see processes that escape."""
    marks = [marker() for _ in range(4)]
    subprocess.run(
        ["bash", "-c", _escapes(marks)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        assert wait_for(lambda: len(_all_sleepers(marks)) == 4, timeout=30)
    finally:
        kill_all(_all_sleepers(marks))


@pytest.mark.parametrize("backend", ["bwrap", "landlock"])
def test_background_jobs_end_with_the_command(backend, make_policy, request):
    sandbox = request.getfixturevalue(f"{backend}_sandbox")(make_policy())
    marks = [marker() for _ in range(4)]
    result = run_in(sandbox, _escapes(marks))
    assert result.stdout.strip() == "started", result.stderr
    assert wait_for(lambda: not _all_sleepers(marks), timeout=30), _all_sleepers(marks)


@pytest.mark.parametrize("backend", ["bwrap", "landlock"])
def test_killing_the_process_group_ends_everything(backend, make_policy, request):
    """What the bash tool does on a timeout or Ctrl-C: SIGTERM to the leader's group."""
    sandbox = request.getfixturevalue(f"{backend}_sandbox")(make_policy())
    marks = [marker() for _ in range(4)]
    launch = sandbox.launch(["bash", "-c", _escapes(marks) + "; sleep 600"], dict(os.environ))
    process = subprocess.Popen(
        launch.argv, cwd=launch.cwd, env=launch.env, start_new_session=True, pass_fds=launch.pass_fds,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        assert wait_for(lambda: len(_all_sleepers(marks)) == 4), "the jobs never started"
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)
        assert wait_for(lambda: not _all_sleepers(marks), timeout=30), _all_sleepers(marks)
    finally:
        kill_all(_all_sleepers(marks))
        process.kill()


@pytest.mark.parametrize("backend", ["bwrap", "landlock", "off"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL])
def test_nothing_outlives_caretz(backend, signum, work, home, request):
    if backend != "off":
        request.getfixturevalue(f"{backend}_sandbox")  # fails the test when it is missing
    marks = [marker() for _ in range(4)]
    spec = json.dumps({"cwd": str(work), "home": str(home), "backend": backend})
    caretz = subprocess.Popen(
        [sys.executable, "-m", "tests.sandbox.standin", spec, _escapes(marks) + "; sleep 600"],
        cwd=REPO, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert caretz.stdout is not None
        assert caretz.stdout.readline().startswith("started")
        assert wait_for(lambda: len(_all_sleepers(marks)) == 4), "the jobs never started"
        caretz.send_signal(signum)
        caretz.wait(timeout=10)
        assert wait_for(lambda: not _all_sleepers(marks), timeout=30), _all_sleepers(marks)
    finally:
        kill_all(_all_sleepers(marks))
        caretz.kill()


def test_with_the_sandbox_off_leftovers_still_end_with_the_command(make_policy):
    """Off means no confinement, not no cleanup: the rule-free launcher reaps what is left."""
    policy = make_policy(mode=SandboxMode.OFF)
    sandbox = open_sandbox(policy, check_sandbox(policy.mode))
    marks = [marker() for _ in range(4)]
    result = run_in(sandbox, _escapes(marks) + f"; echo x > {policy.cwd.parent}/free.txt")
    assert result.stdout.strip() == "started", result.stderr
    assert (policy.cwd.parent / "free.txt").exists()  # really unconfined
    assert wait_for(lambda: not _all_sleepers(marks), timeout=30), _all_sleepers(marks)


def test_one_command_let_out_of_the_sandbox_keeps_the_filter_and_the_cleanup(
    make_policy, bwrap_sandbox
):
    sandbox = bwrap_sandbox(make_policy())
    marks = [marker() for _ in range(4)]
    outside = sandbox.policy.cwd.parent / "escalated.txt"
    launch = sandbox.launch(
        ["bash", "-c", _escapes(marks) + f"; echo $ANTHROPIC_API_KEY > {outside}"],
        dict(os.environ, ANTHROPIC_API_KEY="sk-ant-secret"),
        confined=False,
    )
    done = subprocess.run(
        launch.argv, cwd=launch.cwd, env=launch.env, capture_output=True, pass_fds=launch.pass_fds
    )
    assert done.returncode == 0, done.stderr
    assert outside.read_text() == "\n"  # written outside the roots, without the key
    assert wait_for(lambda: not _all_sleepers(marks), timeout=30), _all_sleepers(marks)


TIMEOUT_S = 600


@pytest.mark.parametrize("backend", ["bwrap", "landlock", "off", "none"])
def test_the_bash_tool_sees_a_command_exit_at_once_not_at_its_next_wake_up(
    backend, make_policy, request
):
    """With wake-ups an hour apart (they are for a cancel and a worker thread's interrupt),
    a command that exits is still seen when it exits: a wait on a timer would only see
    it at the call's timeout (10 minutes; the check allows half of that for `true`).
    Its output and exit code come with it."""
    if backend in ("bwrap", "landlock"):
        sandbox = request.getfixturevalue(f"{backend}_sandbox")(make_policy())
    elif backend == "off":
        policy = make_policy(mode=SandboxMode.OFF)
        sandbox = open_sandbox(policy, check_sandbox(policy.mode))
    else:
        sandbox = None
    tool = BashTool(wake_s=3600)
    ctx = ToolContext(workspace=make_policy().cwd, sandbox=sandbox)

    for command, code in (("true", 0), ("echo out; exit 3", 3)):
        result = tool.run({"command": command, "timeout": TIMEOUT_S}, ctx)

        assert result.duration_s < TIMEOUT_S / 2
        assert result.ended_by is None, result.output
        assert result.exit_code == code, result.output
    assert result.output == "out\n[exit code 3]"
