"""Running one hook command for real (hooks/runner.py): stdin, environment, timeout.

Here the session's sandbox is off (hooks run as commands do then: under the launcher
without rules); tests/sandbox/test_hook_runs.py runs them in bubblewrap and Landlock."""

from __future__ import annotations

import json
import time
from pathlib import Path

from caretz.hooks.runner import HookEnvironment, run_command
from caretz.sandbox.detect import check_sandbox
from caretz.sandbox.policy import SandboxMode, build_policy
from caretz.sandbox.runner import Sandbox, open_sandbox
from tests.e2e.hook_scripts import gone


def sandbox_off(project: Path) -> Sandbox:
    policy = build_policy(cwd=project, home=project, mode=SandboxMode.OFF)
    return open_sandbox(policy, check_sandbox(policy.mode))


def test_the_event_arrives_on_stdin_in_the_project_with_its_variables(tmp_path: Path):
    where = HookEnvironment(
        tmp_path, {"PATH": "/usr/bin:/bin", "KEPT": "yes"}, sandbox_off(tmp_path)
    )

    run = run_command(
        'cat; echo; pwd; echo "$KEPT $CARETZ_PROJECT_DIR $CLAUDE_PROJECT_DIR"; echo err >&2',
        {"hook_event_name": "Stop", "n": 1},
        where,
        10,
    )

    assert run.exit_code == 0 and not run.timed_out
    payload, cwd, variables = run.stdout.splitlines()
    assert json.loads(payload) == {"hook_event_name": "Stop", "n": 1}
    assert cwd == str(tmp_path)
    assert variables == f"yes {tmp_path} {tmp_path}"
    assert run.stderr == "err\n"


def test_a_hook_past_its_timeout_is_killed_with_everything_it_started(tmp_path: Path):
    where = HookEnvironment(tmp_path, {"PATH": "/usr/bin:/bin"}, sandbox_off(tmp_path))
    started = time.monotonic()

    run = run_command("sleep 100 & echo $! > child.pid; echo partial; sleep 100", {}, where, 0.5)

    assert time.monotonic() - started < 5
    assert run.timed_out and run.exit_code is None
    assert run.stdout == "partial\n"  # what it wrote before it was killed is kept
    assert gone(int((tmp_path / "child.pid").read_text()))


def test_a_hook_that_ignores_stdin_and_exits_is_fine(tmp_path: Path):
    where = HookEnvironment(tmp_path, {"PATH": "/usr/bin:/bin"}, sandbox_off(tmp_path))
    run = run_command("exit 3", {"big": "x" * 1_000_000}, where, 10)
    assert run.exit_code == 3


def test_with_the_sandbox_off_a_hook_runs_as_commands_do_on_a_path_without_the_project(
    tmp_path: Path,
):
    project = tmp_path / "project"
    (project / "bin").mkdir(parents=True)
    path = f"{project / 'bin'}:/usr/bin:/bin"
    where = HookEnvironment(project, {"PATH": path}, sandbox_off(project))

    run = run_command(f'echo "$PATH"; echo out > {tmp_path}/outside.txt', {}, where, 10)

    assert run.exit_code == 0, run.stderr
    assert run.stdout == "/usr/bin:/bin\n"  # no entry a command could have planted into
    assert (tmp_path / "outside.txt").read_text() == "out\n"  # no sandbox: as commands
