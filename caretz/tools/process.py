"""Starting a command the one way caretz starts what the project or the model can influence,
and ending it with all it started.

The bash tool, background jobs, the `!` shell of the interactive session, hooks (the
user's and the project's), a custom command's `!` lines (bash calls) and ripgrep all
start here (`start_process`); tests/test_spawning.py fails on a process started anywhere
else that is not one of caretz's own trusted programs. Every command runs in its own
session and process group (no controlling terminal, so it cannot prompt), inside the
session's sandbox when there is one: bubblewrap or the Landlock launcher leads the
group, and ending the group ends the whole sandbox. With the sandbox off, or for one
command let out of it, the launcher without rules leads the group and still kills what
the command leaves behind. Without a sandbox at all (tests, embedding) the command runs
directly in its own group.

Start a command from a thread that outlives it (the turn's thread): the parent-death
signal the sandbox relies on fires when the thread that forked the child exits.

Waiting for a command wakes when it exits (`ShellProcess.wait_exit`): a pidfd opened
right after the fork, before any other thread could reap the pid and let it be reused,
is readable from the moment the command ends. Where there is none (not Linux, a kernel
before 5.3) the wait is `Popen.wait`'s own, which polls in growing steps.
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import select
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from caretz.inbound import ascii_number
from caretz.sandbox.reaper import become_subreaper

if TYPE_CHECKING:
    from caretz.sandbox.covers import Covers
    from caretz.sandbox.runner import Sandbox


class ShellProcess(subprocess.Popen[bytes]):
    """A started command whose exit can be waited for without a polling step."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # Popen's own
        super().__init__(*args, **kwargs)
        self._exit_fd = _pidfd(self.pid)
        # Closed once the exit is seen, or when the object goes (at most once either way).
        self._close_exit_fd = weakref.finalize(self, _close_quietly, self._exit_fd)

    def wait_exit(self, timeout: float) -> bool:
        """True once the command has exited (and is reaped), False when `timeout` seconds
        pass first. Ctrl-C (a signal) breaks the wait."""
        if self.returncode is not None:
            return True
        if self._exit_fd is None or not self._close_exit_fd.alive:
            try:
                self.wait(timeout)
            except subprocess.TimeoutExpired:
                return False
            return True
        poller = select.poll()
        poller.register(self._exit_fd, select.POLLIN)
        if not poller.poll(max(0, math.ceil(timeout * 1000))):
            return False
        # It has exited; another thread may be reaping it (it returns at once then).
        self.wait()
        self._close_exit_fd()
        return True


Process = ShellProcess


def _pidfd(pid: int) -> int | None:
    """A pidfd for `pid`, or None where the system has none."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        code: int | None = opener(pid)
        return code
    except OSError:
        return None


def _close_quietly(fd: int | None) -> None:
    if fd is None:
        return
    with contextlib.suppress(OSError):
        os.close(fd)


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
    argv = [shell_program(sandbox, confined), "-c", command]
    return start_process(argv, sandbox, cwd=cwd or workspace, confined=confined)


def start_process(
    argv: Sequence[str],
    sandbox: Sandbox | None,
    *,
    cwd: Path,
    environ: Mapping[str, str] | None = None,
    confined: bool = True,
    stdin: int = subprocess.DEVNULL,
    stderr: int = subprocess.STDOUT,
    pass_fds: tuple[int, ...] = (),
) -> Process:
    """`argv` started the way the session starts everything the project or the model can
    influence (the bash tool, jobs, hooks, a custom command's `!` lines, ripgrep): inside
    `sandbox` unless `confined` is False, with its filtered `environ` (caretz's own by
    default), in a process group of its own, stdout on a pipe. With no sandbox at all
    (tests, embedding, a search with the sandbox off) `argv` runs as it is, with
    `environ` and `pass_fds`. Raises OSError when it cannot start."""
    become_subreaper()  # what a launcher killed outright leaves comes back to caretz
    env: dict[str, str] | None = dict(environ) if environ is not None else None
    fds = pass_fds
    covered = sandbox is not None and sandbox.mounts_covers(confined)
    if covered:
        # Before the command line is built: from here on no cover mount point is removed,
        # so what the command line finds on disk is still there when bubblewrap starts.
        assert sandbox is not None
        sandbox.covers.enter()
    launch = None
    try:
        if sandbox is not None:
            launch = sandbox.launch(
                argv, os.environ if environ is None else environ, confined=confined, cwd=cwd
            )
            if covered:
                sandbox.covers.record(launch.mount_points)
            argv, env, cwd, fds = launch.argv, launch.env, launch.cwd, launch.pass_fds
        process = ShellProcess(
            list(argv),
            cwd=cwd,
            env=env,
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=stderr,
            start_new_session=True,
            pass_fds=fds,
        )
    except BaseException:
        if covered and sandbox is not None:
            sandbox.covers.leave()
        raise
    finally:
        if launch is not None:
            launch.close()
    if covered and sandbox is not None:
        sandbox.covers.started(process.pid, lambda: _end_at_close(process))
        _leave_when_ended(process, sandbox.covers)
    return process


END_AT_CLOSE_GRACE_S = 2.0  # SIGTERM to SIGKILL for a sandbox still running at the end


def _end_at_close(process: Process) -> None:
    """The session ends with this sandbox still running: it ends now, and is waited for."""
    if process.returncode is None:
        end_group(process, END_AT_CLOSE_GRACE_S)


def shell_program(sandbox: Sandbox | None, confined: bool) -> str:
    """The shell a command, a hook or a `!` line runs in: the trusted bash (caretz/trusted.py),
    never one on a PATH entry a command could write. Without one, inside the sandbox bash
    is whatever the sandbox holds (a planted one stays confined); outside it nothing runs:
    raises OSError (a failed call, one line). No sandbox at all (tests): bash on PATH."""
    if sandbox is None or sandbox.bash_path is None:
        return "bash"
    if sandbox.bash_path:
        return sandbox.bash_path
    if confined and sandbox.enforced:
        return "bash"
    raise OSError(
        errno.ENOENT,
        "no bash outside the writable roots on PATH: caretz runs no shell a command "
        "could have planted outside the sandbox",
    )


def _leave_when_ended(process: Process, covers: Covers) -> None:
    """Tell `covers` when the sandbox is gone: bwrap, the group leader, has been reaped
    (Popen.wait may be called from several threads)."""

    def wait() -> None:
        process.wait()
        covers.leave(process.pid)

    threading.Thread(target=wait, name="sandbox-covers", daemon=True).start()


def end_group(process: subprocess.Popen[bytes], grace_s: float) -> None:
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
