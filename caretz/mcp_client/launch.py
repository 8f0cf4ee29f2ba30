"""How a stdio server is started: its environment, and its command under caretz's launcher.

A server gets a minimal environment (the names below, where set) plus what its entry's
`env` gives: never caretz's provider keys or other secrets. A `${VAR}` in its entry is
how a user passes one on purpose.

The command runs under the launcher without rules (sandbox/landlock_rules.py), the same
one caretz puts in front of a command run with the sandbox off: the server is not
sandboxed, but the launcher gets a parent-death signal, so the server and everything it
started end when caretz ends, a kill -9 included.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping

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
