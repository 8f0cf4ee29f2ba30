"""Local GGUF models: a llama.cpp server that caretz starts, talks to and stops.

A provider with a `local` section (the built-in `local` provider, or an entry in
profiles.json) gets its own llama.cpp HTTP server (the `xllamacpp` package, from
the `caretz[local]` extra) on a free loopback port. The server runs in a child
process, `python -m caretz.providers.local`, so a crashing or hung model never
takes caretz down and stopping it is ending one process group. Requests then go
through the ordinary OpenAI or Anthropic provider to that URL.

The child never outlives caretz: caretz stops it at exit (atexit, which also runs
after Ctrl-C and errors), and the child ends itself when its stdin pipe closes,
which happens however caretz dies.
"""

from __future__ import annotations

import argparse
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
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from caretz.providers.registry import ProviderEntry

INSTALL_HINT = "pip install 'caretz[local]'"
BUILTIN_TEMPLATE = "chatml-tools"  # chatTemplate value naming the template caretz ships
BUILTIN_TEMPLATE_FILE = "chatml_tools.jinja"
DEFAULT_LOAD_TIMEOUT_S = 300.0
STOP_GRACE_S = 3.0
GGUF_MAGIC = b"GGUF"
_ERROR_TAIL_LINES = 3


class LocalServerError(Exception):
    """The local model server could not start; the message says what to fix."""


@dataclass(frozen=True)
class LocalModel:
    """A provider's `local` section: run this GGUF file on a managed llama.cpp server."""

    model: str | None = None  # the GGUF file; None: the model ID of the ref is the path
    chat_template: str | None = None  # a Jinja file, or "chatml-tools"; None: the model's own
    context_size: int | None = None  # tokens; None: the model's trained context
    threads: int | None = None  # CPU threads; None: llama.cpp decides
    load_timeout_s: float = DEFAULT_LOAD_TIMEOUT_S


@dataclass(frozen=True)
class ServerSpec:
    """Exactly what one server runs; equal specs share one server."""

    model_path: Path
    chat_template: Path | None = None
    context_size: int | None = None
    threads: int | None = None

    def argv(self) -> list[str]:
        args = ["--model", str(self.model_path)]
        if self.chat_template is not None:
            args += ["--chat-template", str(self.chat_template)]
        if self.context_size is not None:
            args += ["--context-size", str(self.context_size)]
        if self.threads is not None:
            args += ["--threads", str(self.threads)]
        return args


def builtin_template_path() -> Path:
    from importlib.resources import files

    return Path(str(files("caretz.providers").joinpath(BUILTIN_TEMPLATE_FILE)))


def server_spec(local: LocalModel, model_id: str, cwd: Path | None = None) -> ServerSpec:
    """The files a `local` section names, checked; relative paths are taken from `cwd`."""
    base = cwd or Path.cwd()
    model_path = _existing_file(base, local.model or model_id, "model file")
    _check_gguf(model_path)
    template = None
    if local.chat_template == BUILTIN_TEMPLATE:
        template = builtin_template_path()
    elif local.chat_template:
        template = _existing_file(base, local.chat_template, "chat template")
    return ServerSpec(model_path, template, local.context_size, local.threads)


def _existing_file(base: Path, name: str, what: str) -> Path:
    path = (base / Path(name).expanduser()).resolve()
    if not path.is_file():
        raise LocalServerError(f"{what} {path} does not exist")
    return path


def _check_gguf(path: Path) -> None:
    try:
        with path.open("rb") as file:
            magic = file.read(len(GGUF_MAGIC))
    except OSError as exc:
        raise LocalServerError(f"cannot read model file {path}: {exc.strerror}") from None
    if magic != GGUF_MAGIC:
        raise LocalServerError(f"{path} is not a GGUF model file (llama.cpp runs .gguf files)")


def display_path(path: Path) -> str:
    home = Path.home()
    return f"~/{path.relative_to(home)}" if path.is_relative_to(home) else str(path)


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
        from importlib.util import find_spec as default_find_spec

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
        base_url = server.url + ("/v1" if entry.protocol == "openai" else "")
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
    assert process.stdout is not None
    lines: queue.Queue[bytes] = queue.Queue()
    reader = threading.Thread(
        target=lambda: lines.put(process.stdout.readline()),  # type: ignore[union-attr]
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
    import httpx

    while True:
        try:
            # trust_env=False: a proxy from the environment must not get loopback traffic.
            if httpx.get(f"{url}/health", timeout=2.0, trust_env=False).status_code == 200:
                return
        except httpx.TransportError:
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


# --------------------------------------------------------------- the child process


def _parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m caretz.providers.local",
        description="Serve a GGUF model with llama.cpp on a free loopback port "
        "(caretz starts this; it prints its URL as JSON and stops when stdin closes).",
    )
    parser.add_argument("--model", required=True)
    parser.add_argument("--chat-template")
    parser.add_argument("--context-size", type=int)
    parser.add_argument("--threads", type=int)
    return parser.parse_args(argv)


def _report(data: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(data) + "\n")
    sys.stdout.flush()


def _exit_when_stdin_closes() -> None:
    def watch() -> None:
        while sys.stdin.buffer.read(4096):
            pass
        os._exit(0)  # the server's own threads would keep a normal exit waiting

    threading.Thread(target=watch, name="stdin-watch", daemon=True).start()


def server_params(args: argparse.Namespace) -> Any:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # a free port; the server reports it
    params.verbosity = 1  # errors only, to stderr
    params.n_parallel = 1  # one request at a time gets the whole context
    if args.context_size is not None:
        params.n_ctx = args.context_size
    if args.threads is not None:
        params.cpuparams.n_threads = args.threads
        params.cpuparams_batch.n_threads = args.threads
    if args.chat_template:
        params.chat_template = Path(args.chat_template).read_text(encoding="utf-8")
        params.use_jinja = True
    return params


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(sys.argv[1:] if argv is None else argv)
    try:
        import xllamacpp
    except ImportError:
        _report({"error": "not-installed"})
        return 3
    try:
        server = xllamacpp.Server(server_params(args))
    except Exception as exc:  # reported to caretz, which shows llama.cpp's own log lines
        _report({"error": str(exc) or type(exc).__name__})
        return 1
    _report({"url": server.listening_address})
    # Nothing else goes to stdout: nobody reads it any more, and a full pipe would block.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    # Started only now, so a failure above is always reported; a caretz that died
    # while the model loaded has closed the pipe already, and this ends at once.
    _exit_when_stdin_closes()
    threading.Event().wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
