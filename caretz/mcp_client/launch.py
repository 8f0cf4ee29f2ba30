"""How a stdio server is started: its environment, and its command under caretz's launcher.

A server gets a minimal environment (the names below, where set) plus what its entry's
`env` gives: never caretz's provider keys or other secrets. A `${VAR}` in its entry is
how a user passes one on purpose.

The command runs under the launcher without rules (sandbox/landlock_rules.py), the same
one caretz puts in front of a command run with the sandbox off: the server is not
sandboxed, but the launcher gets a parent-death signal, so the server and everything it
started end when caretz ends, a kill -9 included.

`spawn` starts it before the MCP SDK is imported (the SDK takes longer to import than
most servers take to boot, so the two overlap), on the manager's event loop, whose thread
lives as long as the servers; the connection then speaks to the running process.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
from collections.abc import Mapping
from typing import IO

from caretz.sandbox.envfilter import EnvFilter
from caretz.sandbox.landlock_rules import unconfined_argv

BASE_ENV = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
)


# Names a server also gets from caretz's own environment where its entry does not set
# them (as the SDK's own launcher gives them).
INHERITED = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
# The MCP spec's shutdown: stdin closed, then SIGTERM to its process group, then SIGKILL,
# each after this long without an exit.
STOP_GRACE_S = 2.0
EXIT_POLL_S = 0.01


class CommandNotFound(FileNotFoundError):
    def __init__(self, command: str):
        super().__init__(f"command not found: {command}")


def server_environment(
    caretz_env: Mapping[str, str], configured: Mapping[str, str]
) -> dict[str, str]:
    """The base names from caretz's environment (and the locale's LC_*), none holding a
    secret by the shell's filter, then the entry's env."""
    keeps = EnvFilter().keeps
    base = {
        name: value
        for name, value in caretz_env.items()
        if (name in BASE_ENV or name.startswith("LC_"))
        and not value.startswith("()")
        and keeps(name, value)
    }
    return {**base, **configured}


def stdio_argv(command: str, args: tuple[str, ...], env: Mapping[str, str], cwd: str) -> list[str]:
    """The argv that starts the server under the launcher; raises CommandNotFound."""
    found = _find(command, env.get("PATH", os.defpath), cwd)
    if found is None:
        raise CommandNotFound(command)
    return unconfined_argv([found, *args])


def _find(command: str, path: str, cwd: str) -> str | None:
    if os.sep in command:
        candidate = os.path.join(cwd, os.path.expanduser(command))
        return candidate if os.access(candidate, os.X_OK) and os.path.isfile(candidate) else None
    return shutil.which(command, path=path)


async def spawn(
    command: str, args: tuple[str, ...], env: Mapping[str, str], cwd: str, errlog: IO[str]
) -> asyncio.subprocess.Process:
    """The server's process, its stdin and stdout piped, in a session of its own (run on
    the manager's loop). Raises CommandNotFound or OSError."""
    argv = stdio_argv(command, args, env, cwd)
    inherited = {
        name: value
        for name in INHERITED
        if (value := os.environ.get(name)) is not None and not value.startswith("()")
    }
    return await asyncio.create_subprocess_exec(
        *argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=errlog,
        env={**inherited, **env},
        cwd=cwd or None,
        start_new_session=True,
    )


async def stop(process: asyncio.subprocess.Process, started: bool = True) -> None:
    """Ends the server: stdin closed, then its group sent SIGTERM, then SIGKILL. One that
    never `started` (it did not answer the handshake) gets SIGTERM at once: it may not be
    reading its stdin yet."""
    if process.stdin is not None:
        process.stdin.close()
    steps = (None, signal.SIGTERM, signal.SIGKILL) if started else (signal.SIGTERM, signal.SIGKILL)
    for signum in steps:
        if signum is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signum)
        if await _exited(process, STOP_GRACE_S):
            return


async def _exited(process: asyncio.subprocess.Process, within_s: float) -> bool:
    """Whether it exits within `within_s` (not `wait()`, which also waits for its pipes
    to close, and a child of it may hold them)."""
    deadline = asyncio.get_running_loop().time() + within_s
    while process.returncode is None:
        if asyncio.get_running_loop().time() >= deadline:
            return False
        await asyncio.sleep(EXIT_POLL_S)
    return True
