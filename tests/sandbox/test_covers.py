"""The mount points bubblewrap creates for covered paths are taken away once nothing runs."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from caretz.sandbox.covers import Covers
from caretz.sandbox.detect import check_sandbox
from caretz.sandbox.policy import build_policy, parse_mode
from caretz.sandbox.runner import Sandbox, open_sandbox
from caretz.tools.process import start_shell


def test_a_cover_directory_stays_while_a_command_runs_and_goes_after(tmp_path: Path):
    covers = Covers()
    project = tmp_path / ".caretz"
    covers.enter([project])
    covers.enter([project])
    project.mkdir()  # what bubblewrap does to mount the cover
    covers.leave()
    assert project.is_dir()  # another sandbox still has it mounted
    covers.leave()
    assert not project.exists()


def test_the_sessions_end_takes_them_away_when_a_commands_end_was_not_heard(tmp_path: Path):
    covers = Covers()
    project = tmp_path / ".caretz"
    covers.enter([project])
    project.mkdir()
    # The run ends before the thread that waits on the command has said it ended.
    covers.close()
    assert not project.exists()


def test_a_directory_that_was_there_before_or_got_content_is_left_alone(tmp_path: Path):
    covers = Covers()
    existing = tmp_path / "existing"
    existing.mkdir()
    filled = tmp_path / "filled"
    covers.enter([existing, filled])
    filled.mkdir()
    (filled / "keep.txt").write_text("x")
    covers.leave()
    assert existing.is_dir() and (filled / "keep.txt").exists()


def test_a_sandboxed_command_leaves_no_caretz_directory_behind(tmp_path: Path):
    assert shutil.which("bwrap"), "bubblewrap is needed (apt install bubblewrap)"
    workspace = tmp_path / "work"
    workspace.mkdir()
    policy = build_policy(cwd=workspace, home=tmp_path / "home", mode=parse_mode("workspace-write"))
    sandbox = open_sandbox(policy, check_sandbox(policy.mode, policy.network))
    command = "mkdir .caretz/rules 2>/dev/null && echo planted || echo refused"
    output, _ = start_shell(command, workspace, sandbox).communicate(timeout=30)
    assert output.strip() == b"refused"  # the cover held while the command ran
    deadline = time.monotonic() + 30  # a thread removes the cover once bwrap is reaped
    while (workspace / ".caretz").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not (workspace / ".caretz").exists()


def test_missing_parents_of_a_cover_go_too(tmp_path: Path):
    covers = Covers()
    commands = tmp_path / ".claude" / "commands"
    covers.enter([commands])
    commands.mkdir(parents=True)
    covers.leave()
    assert not (tmp_path / ".claude").exists()


def test_a_command_cannot_plant_claude_command_files(tmp_path: Path):
    assert shutil.which("bwrap"), "bubblewrap is needed (apt install bubblewrap)"
    workspace = tmp_path / "work"
    workspace.mkdir()
    policy = build_policy(cwd=workspace, home=tmp_path / "home", mode=parse_mode("workspace-write"))
    sandbox = open_sandbox(policy, check_sandbox(policy.mode, policy.network))
    command = "mkdir -p .claude/commands/x 2>/dev/null && echo planted || echo refused"
    output, _ = start_shell(command, workspace, sandbox).communicate(timeout=30)
    assert output.strip() == b"refused"
    deadline = time.monotonic() + 30
    while (workspace / ".claude").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not (workspace / ".claude").exists()


def test_a_command_started_as_another_ends_finds_its_mount_points(tmp_path: Path):
    """The race a cover's removal once lost: a job's command line was built while the
    previous job's `.caretz` mount point existed, which was then removed under it."""
    from caretz.tools.jobtable import JobTable

    assert shutil.which("bwrap"), "bubblewrap is needed (apt install bubblewrap)"
    for attempt in range(8):
        workspace = tmp_path / f"work{attempt}"
        workspace.mkdir()
        policy = build_policy(
            cwd=workspace, home=tmp_path / "home", mode=parse_mode("workspace-write")
        )
        sandbox = open_sandbox(policy, check_sandbox(policy.mode, policy.network))
        jobs = JobTable()
        first = jobs.start("sleep 300", workspace, sandbox)
        time.sleep(0.2)
        jobs.stop(first)
        second = jobs.start("sleep 301", workspace, sandbox)
        time.sleep(0.3)
        try:
            assert second.running, second.log.read(0, 2000).text
        finally:
            jobs.stop_all()


def _covered_workspace(tmp_path: Path) -> tuple[Path, Sandbox]:
    assert shutil.which("bwrap"), "bubblewrap is needed (apt install bubblewrap)"
    workspace = tmp_path / "work"
    workspace.mkdir()
    os.mkfifo(workspace / "go")
    policy = build_policy(cwd=workspace, home=tmp_path / "home", mode=parse_mode("workspace-write"))
    return workspace, open_sandbox(policy, check_sandbox(policy.mode, policy.network))


# Says it is running (its sandbox, and so the cover, are set up), waits for the test, then
# tries to plant project configuration where the cover was.
PLANTER = "echo ready; read -r _ < go; mkdir .caretz && echo planted > .caretz/rules"


def _release(workspace: Path) -> None:
    """Let PLANTER go on, if it still runs (no reader: it was ended)."""
    with contextlib.suppress(OSError):
        os.close(os.open(workspace / "go", os.O_WRONLY | os.O_NONBLOCK))


def test_the_sessions_end_ends_a_command_still_running_before_taking_its_cover(tmp_path: Path):
    workspace, sandbox = _covered_workspace(tmp_path)
    process = start_shell(PLANTER, workspace, sandbox)
    assert process.stdout is not None and process.stdout.readline() == b"ready\n"
    assert (workspace / ".caretz").is_dir()  # the cover's mount point, made on the host

    sandbox.close()  # a hook or a search still running when the session ends
    _release(workspace)
    process.wait(timeout=60)

    # Removed under a running sandbox, the cover would be gone and the command free to plant.
    assert not (workspace / ".caretz").exists()


def test_a_sandbox_rebuilt_mid_session_shares_the_mount_points_it_closes(tmp_path: Path):
    workspace, first = _covered_workspace(tmp_path)
    rebuilt = open_sandbox(
        first.policy, check_sandbox(first.policy.mode, first.policy.network), runtime=first.runtime
    )
    process = start_shell(PLANTER, workspace, first)  # a job that keeps the sandbox it had
    assert process.stdout is not None and process.stdout.readline() == b"ready\n"

    rebuilt.close()  # the session ends with the sandbox it has now

    assert not (workspace / ".caretz").exists()
    _release(workspace)
    process.wait(timeout=60)
    assert not (workspace / ".caretz").exists()


EXITS_WITHOUT_CLOSING = """
import sys
from pathlib import Path
from caretz.sandbox.detect import check_sandbox
from caretz.sandbox.policy import build_policy, parse_mode
from caretz.sandbox.runner import Sandbox, open_sandbox
from caretz.tools.process import start_shell

workspace, home = Path(sys.argv[1]), Path(sys.argv[2])
policy = build_policy(cwd=workspace, home=home, mode=parse_mode("workspace-write"))
sandbox = open_sandbox(policy, check_sandbox(policy.mode, policy.network))
process = start_shell(sys.argv[3], workspace, sandbox)
print(process.stdout.readline().decode().strip(), flush=True)
raise SystemExit(0)  # an error or a signal: the session never closes, the command runs on
"""


def test_a_process_that_exits_with_a_sandbox_running_leaves_no_mount_point(tmp_path: Path):
    workspace, _ = _covered_workspace(tmp_path)
    ran = subprocess.run(
        [sys.executable, "-c", EXITS_WITHOUT_CLOSING, workspace, tmp_path / "home", PLANTER],
        capture_output=True,
        timeout=120,
    )
    assert ran.stdout == b"ready\n", ran.stderr
    _release(workspace)
    assert not (workspace / ".caretz").exists()
