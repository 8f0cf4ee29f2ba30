"""Local GGUF models: a llama.cpp server that caretz starts, talks to and stops.

A provider with a `local` section (the built-in `local` provider, or an entry in
profiles.json) gets its own llama.cpp HTTP server (the `xllamacpp` package, from
the `caretz[local]` extra) on a free loopback port. The server runs in a child
process, `python -m caretz.providers.local`, so a crashing or hung model never
takes caretz down and stopping it is ending one process group. Requests then go
through the ordinary OpenAI or Anthropic provider to that URL.

The child never outlives caretz: caretz stops it at exit (atexit, which also runs
after Ctrl-C and errors), and the child ends itself when its stdin pipe closes,
which happens however caretz dies. This module starts, shares and stops the
servers; local_spec.py checks what a `local` section names; local_runner.py is
the child.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from importlib.util import find_spec as default_find_spec
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from caretz.lazy import lazy_module
from caretz.providers.entry import DEFAULT_LOAD_TIMEOUT_S, ProviderEntry
from caretz.providers.entry import LocalModel as LocalModel  # profiles.json's `local` section
from caretz.providers.local_spec import BUILTIN_TEMPLATE as BUILTIN_TEMPLATE
from caretz.providers.local_spec import LocalServerError as LocalServerError
from caretz.providers.local_spec import (
    ServerSpec,
    display_path,
    server_spec,
)
from caretz.providers.local_spec import (
    builtin_template_path as builtin_template_path,  # docs/local-models.md names it here
)

if TYPE_CHECKING:
    from caretz.providers import wire
else:
    # The HTTP client: only while a server loads (config/schema.py imports this module for its
    # names, and the server's child runs it).
    wire = lazy_module("caretz.providers.wire")

INSTALL_HINT = "pip install 'caretz[local]'"
STOP_GRACE_S = 3.0
_ERROR_TAIL_LINES = 3

# --------------------------------------------------------------- one running server


class LocalServer:
    """One llama.cpp server child process; `url` is its root (http://127.0.0.1:PORT)."""

    def __init__(self, spec: ServerSpec, process: subprocess.Popen[bytes], url: str):
        self.spec = spec
        self.process = process
        self.url = url

    @property
    def pid(self) -> int:
        return self.process.pid

    def running(self) -> bool:
        return self.process.poll() is None

    def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """Close the child's stdin (it exits by itself), then terminate, then kill."""
        _stop_process(self.process, grace_s)


def _stop_process(process: subprocess.Popen[bytes], grace_s: float) -> None:
    if process.stdin is not None and not process.stdin.closed:
        with contextlib.suppress(OSError):
            process.stdin.close()
    for sig in (signal.SIGTERM, signal.SIGKILL if os.name == "posix" else signal.SIGTERM):
        try:
            process.wait(grace_s)
            break
        except subprocess.TimeoutExpired:
            _signal_group(process, sig)
    else:
        process.wait()
    if process.stdout is not None:
        process.stdout.close()


def _signal_group(process: subprocess.Popen[bytes], sig: int) -> None:
    try:
        if os.name == "posix":
            os.killpg(process.pid, sig)  # the child leads its own process group
        else:
            process.terminate()
    except (ProcessLookupError, PermissionError):
        pass


# --------------------------------------------------------------- the servers of a process


def _write_stderr(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()


class LocalServers:
    """The local servers caretz runs; each spec is started once and shared.

    `attach` turns a provider entry with a `local` section into an ordinary entry
    whose base URL is the running server. `close` stops them all; it is registered
    with atexit on the first start.
    """

    def __init__(
        self,
        progress: Callable[[str], None] = _write_stderr,
        python: str = sys.executable,
        clock: Callable[[], float] = time.monotonic,
        find_spec: Callable[[str], Any] | None = None,
        cwd: Path | None = None,
    ):
        self._progress = progress
        self._python = python
        self._clock = clock
        self._find_spec = find_spec or default_find_spec
        self._cwd = cwd
        self._servers: dict[ServerSpec, LocalServer] = {}
        self._lock = threading.Lock()
        self._at_exit = False

    @property
    def servers(self) -> list[LocalServer]:
        return list(self._servers.values())

    def attach(self, entry: ProviderEntry, model_id: str) -> ProviderEntry:
        """`entry` pointed at its running server (started now if needed), `local` cleared."""
        if entry.local is None:
            return entry
        self._check_installed()
        spec = server_spec(entry.local, model_id, self._cwd)
        server = self.ensure(spec, entry.local.load_timeout_s)
        base_url = server.url + ("" if entry.protocol == "anthropic" else "/v1")
        return dataclasses.replace(entry, base_url=base_url, local=None)

    def ensure(
        self, spec: ServerSpec, load_timeout_s: float = DEFAULT_LOAD_TIMEOUT_S
    ) -> LocalServer:
        with self._lock:
            server = self._servers.get(spec)
            if server is not None and server.running():
                return server
            self._check_installed()
            server = self._start(spec, load_timeout_s)
            self._servers[spec] = server
            if not self._at_exit:
                atexit.register(self.close)
                self._at_exit = True
            return server

    def close(self) -> None:
        """Stop every server this object started."""
        with self._lock:
            servers, self._servers = list(self._servers.values()), {}
            if self._at_exit:
                atexit.unregister(self.close)
                self._at_exit = False
        for server in servers:
            server.stop()

    def _check_installed(self) -> None:
        if self._find_spec("xllamacpp") is None:
            raise LocalServerError(not_installed_message())

    def _start(self, spec: ServerSpec, load_timeout_s: float) -> LocalServer:
        started = self._clock()
        self._progress(f"caretz: loading {display_path(spec.model_path)}… ")
        # The child's stderr: llama.cpp's error lines, read back if it fails to start.
        with tempfile.TemporaryFile() as log:
            process = self._spawn(spec, log)
            try:
                url = _wait_until_ready(process, log, spec, load_timeout_s)
            except BaseException:
                self._progress("failed\n")
                _stop_process(process, STOP_GRACE_S)
                raise
        self._progress(f"ready in {self._clock() - started:.1f}s\n")
        return LocalServer(spec, process, url)

    def _spawn(self, spec: ServerSpec, log: IO[bytes]) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [self._python, "-m", "caretz.providers.local", *spec.argv()],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            env=_child_env(),
            start_new_session=os.name == "posix",  # Ctrl-C reaches caretz, which stops it
        )


def not_installed_message() -> str:
    return (
        f"local models need llama.cpp's server (xllamacpp), which is not installed: {INSTALL_HINT}"
    )


def _child_env() -> dict[str, str]:
    """The environment with caretz importable, wherever it was imported from."""
    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


def _wait_until_ready(
    process: subprocess.Popen[bytes], log: IO[bytes], spec: ServerSpec, timeout_s: float
) -> str:
    """The server's URL once it answers /health; raises LocalServerError otherwise."""
    deadline = time.monotonic() + timeout_s
    line = _read_line(process, timeout_s)
    where = display_path(spec.model_path)
    if line is None:
        if process.poll() is None:
            raise LocalServerError(f"{where} did not load within {timeout_s:g}s")
        raise LocalServerError(
            f"the llama.cpp server for {where} exited with code {process.returncode}: "
            f"{_error_tail(log) or 'no error message'}"
        )
    report = _parse_report(line)
    if "url" not in report:
        raise LocalServerError(_describe_failure(report, log, where))
    _wait_for_health(report["url"], deadline, process, where)
    return report["url"]


def _read_line(process: subprocess.Popen[bytes], timeout_s: float) -> bytes | None:
    """The child's first stdout line; None when it exited first or the time ran out."""
    stdout = process.stdout
    assert stdout is not None
    lines: queue.Queue[bytes] = queue.Queue()
    reader = threading.Thread(
        target=lambda: lines.put(stdout.readline()),
        name="caretz-local-server",
        daemon=True,
    )
    reader.start()
    try:
        line = lines.get(timeout=timeout_s)
    except queue.Empty:
        return None
    if not line:  # end of output: the child is exiting; let it finish for its exit code
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(STOP_GRACE_S)
    return line or None


def _parse_report(line: bytes) -> dict[str, Any]:
    try:
        report = json.loads(line)
    except ValueError:
        return {"error": line.decode(errors="replace").strip()}
    return report if isinstance(report, dict) else {"error": str(report)}


def _describe_failure(report: dict[str, Any], log: IO[bytes], where: str) -> str:
    if report.get("error") == "not-installed":
        return not_installed_message()
    reason = _error_tail(log) or str(report.get("error") or "no error message")
    return f"llama.cpp could not start {where}: {reason}"


def _error_tail(log: IO[bytes]) -> str:
    """The last error lines llama.cpp logged, without its timestamps."""
    log.seek(0)
    lines = log.read().decode(errors="replace").splitlines()
    errors = [line.split(" E ", 1)[1].strip() for line in lines if " E " in line]
    picked = errors[-_ERROR_TAIL_LINES:] or [line.strip() for line in lines[-1:]]
    return "; ".join(line for line in picked if line)


def _wait_for_health(
    url: str, deadline: float, process: subprocess.Popen[bytes], where: str
) -> None:
    while True:
        try:
            # No proxy: a proxy from the environment must not get loopback traffic.
            if wire.get(f"{url}/health", 2.0).status_code == 200:
                return
        except wire.WireError:
            pass
        if process.poll() is not None:
            raise LocalServerError(f"the llama.cpp server for {where} exited while loading")
        if time.monotonic() >= deadline:
            raise LocalServerError(f"{where} did not become ready (GET {url}/health)")
        time.sleep(0.05)


_shared: LocalServers | None = None


def shared_servers() -> LocalServers:
    """The servers of this caretz process: the session's model and its judge share them.

    A server is a process-wide resource (a child process stopped at exit), so one
    pool per process is deliberate.
    """
    global _shared
    if _shared is None:
        _shared = LocalServers()
    return _shared


if __name__ == "__main__":  # the server's child process (see local_runner.py)
    from caretz.providers.local_runner import main

    sys.exit(main())
