"""`--env-file`: variables (API keys) from a file only its owner can read.

A scheduled run starts with cron's bare environment, so its keys come from such a
file rather than from the crontab, where any process that lists it would see them.
The file must belong to the user and be closed to everyone else (`chmod 600`); a
file others can read or write is refused, not read.
"""

from __future__ import annotations

import os
import stat
from collections.abc import MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING

from caretz.config_base import ConfigError
from caretz.lazy import lazy_module

if TYPE_CHECKING:
    import dotenv
else:
    dotenv = lazy_module("dotenv")  # only a run given --env-file reads one

# The names this process took from an env file: keys, which never expand into a
# project's configuration (runtime/project_trust.py).
_LOADED: set[str] = set()


def read_env_file(path: Path) -> dict[str, str]:
    """The file's `NAME=value` lines; raises ConfigError naming the file and what to fix."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise ConfigError(f"--env-file {path}: no such file") from None
    except OSError as error:
        raise ConfigError(f"--env-file {path}: {error.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"--env-file {path}: not a regular file")
    if info.st_uid != os.getuid():
        raise ConfigError(f"--env-file {path}: owned by another user; it must be yours")
    if info.st_mode & 0o077:
        raise ConfigError(
            f"--env-file {path}: others may read or change it (mode {info.st_mode & 0o777:o}); "
            f"run: chmod 600 {path}"
        )
    values = dotenv.dotenv_values(path, interpolate=False)
    return {name: value for name, value in values.items() if value is not None}


def apply_env_file(path: Path, env: MutableMapping[str, str]) -> None:
    """Add the file's variables to `env`; a variable already set keeps its value."""
    for name, value in read_env_file(path).items():
        env.setdefault(name, value)
        _LOADED.add(name)


def loaded_names() -> frozenset[str]:
    """The variables an env file gave this process."""
    return frozenset(_LOADED)
