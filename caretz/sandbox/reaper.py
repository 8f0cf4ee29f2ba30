"""No survivors: caretz is a child subreaper and ends every descendant when it exits.

A command's launcher (the Landlock fallback's, or the rule-free one with the sandbox
off) kills what the command leaves behind. If the launcher itself dies without a
signal it can act on (`kill -9 $PPID`, a CPU limit the command set on it), its children
would be adopted by init and outlive caretz. As a subreaper (PR_SET_CHILD_SUBREAPER)
caretz adopts them instead, and at exit it kills every process below it. bubblewrap's
PID namespaces already take their processes down; this closes the launcher's gap.

`become_subreaper` is called when the first command starts (ctypes costs start-up time
that a session without commands need not pay); the exit handler comes with it.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Callable

from caretz.inbound import ascii_number

PR_SET_CHILD_SUBREAPER = 36
ROUNDS = 50  # kill-and-look rounds at exit: a process forking meanwhile is found next round

_lock = threading.Lock()
_armed = False
_after: list[Callable[[], None]] = []  # what runs at exit once no descendant is left


def become_subreaper() -> bool:
    """Make this process a subreaper (once) and end its descendants at exit; False where
    the kernel has no such thing (not Linux)."""
    global _armed
    with _lock:
        if _armed:
            return True
        if not sys.platform.startswith("linux"):
            return False
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            return False
        atexit.register(_at_exit)
        _armed = True
        return True


def after_descendants_ended(callback: Callable[[], None]) -> None:
    """Run `callback` at exit once every descendant is dead (at exit all the same where
    caretz is no subreaper)."""
    with _lock:
        if _armed:
            _after.append(callback)
            return
    atexit.register(callback)


def _at_exit() -> None:
    end_descendants()
    for callback in _after:
        callback()


def end_descendants(root: int | None = None) -> list[int]:
    """SIGKILL every process below `root` (this one) until none is left; reap the
    children among them. Returns the pids killed."""
    root = os.getpid() if root is None else root
    killed: list[int] = []
    for _ in range(ROUNDS):
        found = descendants(root)
        if not found:
            break
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        _reap_children(root)
        time.sleep(0.01)  # let the killed go before looking again
    return killed


def descendants(root: int) -> list[int]:
    """Live (not zombie) processes below `root`, from /proc."""
    children: dict[int, list[int]] = {}
    states: dict[int, bytes] = {}
    for entry in os.listdir("/proc"):
        if ascii_number(entry) is None:
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        states[int(entry)] = fields[0]
        children.setdefault(int(fields[1]), []).append(int(entry))
    found: list[int] = []
    pending = list(children.get(root, []))
    while pending:
        pid = pending.pop()
        if states.get(pid) not in (b"Z", b"X"):
            found.append(pid)
        pending.extend(children.get(pid, []))
    return found


def _reap_children(root: int) -> None:
    if root != os.getpid():
        return
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
