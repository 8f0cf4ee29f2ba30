"""Starting a shell command the one way caretz starts them, and ending it with all it started.

Every command runs in its own session and process group (no controlling terminal, so it
cannot prompt), inside the session's sandbox when there is one: bubblewrap or the
Landlock launcher leads the group, and ending the group ends the whole sandbox. With
the sandbox off, or for one command let out of it, the launcher without rules leads
the group and still kills what the command leaves behind. Without a sandbox at all
(tests, embedding) the command runs directly in its own group.

Start a command from a thread that outlives it (the turn's thread): the parent-death
signal the sandbox relies on fires when the thread that forked the child exits.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from caretz.inbound import ascii_number
from caretz.sandbox.reaper import become_subreaper

if TYPE_CHECKING:
    from caretz.sandbox.covers import Covers
    from caretz.sandbox.runner import Sandbox

Process = subprocess.Popen[bytes]


def start_shell(
    command: str,
    workspace: Path,
    sandbox: Sandbox | None,
    *,
    confined: bool = True,
    cwd: Path | None = None,
) -> Process:
    """`bash -c command` in `cwd` (the workspace by default), its output (stdout and
    stderr together) on a pipe.

    `confined=False` runs it outside the sandbox (one command the user let out),
    still with the filtered environment and the launcher's process hygiene.
    Raises OSError when it cannot start.
    """
    become_subreaper()  # what a launcher killed outright leaves comes back to caretz
    argv = [_shell(sandbox, confined), "-c", command]
    env: dict[str, str] | None = None
    cwd = cwd or workspace
    fds: tuple[int, ...] = ()
    covered = sandbox is not None and sandbox.mounts_covers(confined)
    if covered:
        # Before the command line is built: from here on no cover mount point is removed,
        # so what the command line finds on disk is still there when bubblewrap starts.
        assert sandbox is not None
        sandbox.covers.enter(sandbox.cover_paths())
    launch = None
    try:
        if sandbox is not None:
            launch = sandbox.launch(argv, os.environ, confined=confined, cwd=cwd)
            argv, env, cwd, fds = launch.argv, launch.env, launch.cwd, launch.pass_fds
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            pass_fds=fds,
        )
    except BaseException:
        if covered:
            sandbox.covers.leave()  # type: ignore[union-attr]
        raise
    finally:
        if launch is not None:
            launch.close()
    if covered:
        _leave_when_ended(process, sandbox.covers)  # type: ignore[union-attr]
    return process


def _shell(sandbox: Sandbox | None, confined: bool) -> str:
    """bash inside the sandbox is whatever the sandbox holds (a planted one stays confined);
    outside it, only the trusted one (caretz/trusted.py) runs, never one on a PATH entry a
    command could write. Raises OSError (a failed call, one line) when there is none."""
    if sandbox is None or (confined and sandbox.enforced) or sandbox.bash_path is None:
        return "bash"
    if not sandbox.bash_path:
        raise OSError(
            errno.ENOENT,
            "no bash outside the writable roots on PATH: caretz runs no shell a command "
            "could have planted outside the sandbox",
        )
    return sandbox.bash_path


def _leave_when_ended(process: Process, covers: Covers) -> None:
    """Tell `covers` when the sandbox is gone: bwrap, the group leader, has been reaped
    (Popen.wait may be called from several threads)."""

    def wait() -> None:
        process.wait()
        covers.leave()

    threading.Thread(target=wait, name="sandbox-covers", daemon=True).start()


def end_group(process: Process, grace_s: float) -> None:
    """SIGTERM to the command's process group, SIGKILL after `grace_s`, then reap the leader.

    The leader is stopped first, so that it cannot start a child between the moment its
    children are listed and the moment it gets SIGTERM. bubblewrap's sandbox init is
    such a child, in a session of its own: it dies with bubblewrap through the parent-death
    signal, except when bubblewrap is killed before it set that signal (right after the
    start); it is then killed directly, which ends its PID namespace.
    """
    # With start_new_session the leader's pid is the process group id.
    group = process.pid
    children = _stop_and_list_children(group)
    _signal_group(group, signal.SIGTERM)
    _signal(group, signal.SIGCONT)  # the pending SIGTERM is acted on before anything else
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        process.poll()  # reap the leader so it does not count as alive
        if not group_alive(group):
            break
        time.sleep(0.02)
    else:
        _signal_group(group, signal.SIGKILL)
    for pid, started in children:
        if _start_time(pid) == started:
            _signal(pid, signal.SIGKILL)
    # A leader still alive after SIGKILL is stuck in the kernel; nothing more to do.
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=grace_s)


STOP_WAIT_S = 1.0


def _stop_and_list_children(pid: int) -> list[tuple[int, str]]:
    """Stop `pid` and list its children (pid, start time) once it is stopped."""
    _signal(pid, signal.SIGSTOP)
    deadline = time.monotonic() + STOP_WAIT_S
    while _state(pid) not in (None, "T", "t", "Z", "X") and time.monotonic() < deadline:
        time.sleep(0.001)
    return [(child, _start_time(child) or "") for child in _children(pid)]


def _signal(pid: int, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signum)


def _signal_group(group: int, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signum)


def group_alive(group: int) -> bool:
    """Whether any process of the group is still running (zombies do not count)."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if not os.path.isdir("/proc/self"):
        return True
    # killpg(0) also finds zombies, which an init that never reaps leaves behind.
    return any(state not in ("Z", "X") for state in _states_in_group(group))


def _states_in_group(group: int) -> list[str]:
    return [fields[0] for _, fields in _processes() if int(fields[2]) == group]


def _children(parent: int) -> list[int]:
    return [pid for pid, fields in _processes() if int(fields[1]) == parent]


def _processes() -> list[tuple[int, list[str]]]:
    """Every process's /proc stat fields after the command name (state, ppid, pgrp, …);
    none where there is no /proc."""
    found: list[tuple[int, list[str]]] = []
    if not os.path.isdir("/proc/self"):
        return found
    for entry in os.scandir("/proc"):
        if ascii_number(entry.name) is not None:
            fields = _stat_fields(int(entry.name))
            if fields is not None:
                found.append((int(entry.name), fields))
    return found


def _stat_fields(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            stat = handle.read()
    except OSError:
        return None
    # Fields after the command name (which may hold spaces and parentheses).
    return stat.rsplit(")", 1)[1].split()


def _state(pid: int) -> str | None:
    fields = _stat_fields(pid)
    return fields[0] if fields else None


def _start_time(pid: int) -> str | None:
    """When `pid` started (clock ticks since boot): tells a process from a reused pid."""
    fields = _stat_fields(pid)
    return fields[19] if fields else None
