"""Running commands in a sandbox and looking for processes they left, from outside."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
import uuid

from caretz.sandbox.runner import Sandbox


def run_in(
    sandbox: Sandbox, script: str, env: dict[str, str] | None = None, timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    """`bash -c script` the way the bash tool starts it: own session, filtered env."""
    environ = dict(os.environ, HOME=str(sandbox.policy.home), **(env or {}))
    launch = sandbox.launch(["bash", "-c", script], environ)
    return subprocess.run(
        launch.argv,
        cwd=launch.cwd,
        env=launch.env,
        pass_fds=launch.pass_fds,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        start_new_session=True,
    )


def marker() -> str:
    """A unique `sleep` duration: a process that can be found in /proc from outside."""
    return f"4{uuid.uuid4().int % 10**6}.{uuid.uuid4().int % 10**4 + 1}"


def sleepers(mark: str) -> list[int]:
    """Host PIDs of live (not zombie) `sleep <mark>` processes."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
            with open(f"/proc/{entry}/stat", "rb") as handle:
                state = handle.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if argv[:2] == [b"sleep", mark.encode()] and state not in (b"Z", b"X"):
            found.append(int(entry))
    return found


def wait_for(condition, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return bool(condition())


def kill_all(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)
