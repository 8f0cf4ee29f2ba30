"""The MCP servers' event loop: one background thread that the synchronous turn loop hands
work to.

The SDK is async and caretz's loop is not, so every server's connection lives on one
asyncio loop in a thread of its own; `start`, `call` and `close` submit coroutines to it
with `asyncio.run_coroutine_threadsafe` and wait for them with a timeout. The calling
thread never blocks without one: a hung server costs a call its timeout, never the
session. The stdio servers are started from this thread, which lives until `close`,
so the launcher's parent-death signal (mcp_client/launch.py) fires only when caretz
itself is gone. They are started before the SDK is imported (`begin`): a server boots
while the SDK loads.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

from caretz import private_data
from caretz.lazy import lazy_module
from caretz.mcp_client.launch import spawn, stop
from caretz.mcp_client.model import Offers, RemoteTool, ServerSpec
from caretz.mcp_client.names import server_part
from caretz.mcp_client.tokens import TokenStore
from caretz.text import one_line

if TYPE_CHECKING:
    from caretz.mcp_client import connection as mcp_connection
else:
    # The only module importing the MCP SDK: loaded when the first server starts.
    mcp_connection = lazy_module("caretz.mcp_client.connection")

if TYPE_CHECKING:
    from mcp_types import CallToolResult

    from caretz.mcp_client.connection import ServerConnection

T = TypeVar("T")

POLL_S = 0.05
CALL_GRACE_S = 2.0  # past the call's own timeout, before the waiting side gives up
CLOSE_WAIT_S = 8.0  # the stdio shutdown (launch.stop): stdin closed, 2 s, SIGTERM, 2 s, SIGKILL
SPAWN_WAIT_S = 5.0  # for the stdio servers' processes to start, before the SDK is imported


class CallCancelled(Exception):
    """The turn was cancelled while the call ran."""


@dataclass(kw_only=True)
class Attempt:
    """How starting one server went."""

    spec: ServerSpec
    error: str | None = None  # None: it is ready
    tools: list[RemoteTool] = field(default_factory=list)
    offers: Offers = field(default_factory=Offers)  # its resources and prompts
    duration_s: float = 0.0
    login_needed: bool = False  # the error is an OAuth login it asks for (`caretz mcp login`)


@dataclass
class Starting:
    """A server whose start is under way (`McpManager.begin`)."""

    connection: ServerConnection
    ready: concurrent.futures.Future[None]
    started: float  # time.monotonic()
    allowed_s: float  # its startupTimeout

    @property
    def name(self) -> str:
        return self.connection.spec.name

    @property
    def deadline(self) -> float:
        return self.started + self.allowed_s


class McpManager:
    def __init__(self, log_dir: Path | None = None, tokens: TokenStore | None = None):
        """`tokens`: the HTTP servers' OAuth logins (mcp_client/tokens.py)."""
        self.log_dir = log_dir
        self.tokens = tokens
        # The SDK logs transport trouble (a server that died mid-read) with tracebacks;
        # caretz reports it in a line of its own, so the terminal does not get them.
        for name in ("mcp", "httpx2"):
            logger = logging.getLogger(name)
            if not logger.handlers:
                logger.addHandler(logging.NullHandler())
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="caretz-mcp", daemon=True)
        self._thread.start()
        self._connections: dict[str, ServerConnection] = {}  # those that started
        self._all: list[ServerConnection] = []  # those still starting too
        # stdio servers' processes, as they are started, by server name.
        self._spawned: dict[str, concurrent.futures.Future[asyncio.subprocess.Process]] = {}
        self._holders: list[concurrent.futures.Future[None]] = []
        self._lock = threading.Lock()  # a start under way, or the end
        self._logs: dict[str, IO[str]] = {}
        self.closed = False

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()

    # -- start ---------------------------------------------------------------------------
    def start(self, specs: list[ServerSpec], timeout_s: float) -> list[Attempt]:
        """Start every server at once; each has until its own `startupTimeout` (or
        `timeout_s`) from now to be ready."""
        return [self.settle(starting) for starting in self.begin(specs, timeout_s)]

    def begin(
        self,
        specs: list[ServerSpec],
        timeout_s: float,
        before_sdk: Callable[[], object] | None = None,
    ) -> list[Starting]:
        """Start every server at once, without waiting for any (`settle` waits for one).
        The stdio servers' processes start first; the SDK loads while they boot (after
        `before_sdk` returns). Raises RuntimeError once the servers are closing."""
        started = time.monotonic()
        with self._lock:
            self._open_or_raise()
            spawned = {}
            for spec in specs:
                errlog = self._errlog(spec)
                if spec.transport == "stdio":
                    run = spawn(spec.command, spec.args, spec.env, spec.cwd, errlog)
                    spawned[spec.name] = asyncio.run_coroutine_threadsafe(run, self._loop)
            self._spawned.update(spawned)
        # Forked and exec'd (a failure is the connection's to report) before the import.
        concurrent.futures.wait(spawned.values(), timeout=SPAWN_WAIT_S)
        if before_sdk is not None:
            before_sdk()
        # The SDK's import, outside the lock: an end meanwhile need not wait for it.
        server_connection = mcp_connection.ServerConnection
        with self._lock:
            self._open_or_raise()  # `close` has ended the processes spawned above
            connections = [
                server_connection(spec, self._logs[spec.name], spawned.get(spec.name), self.tokens)
                for spec in specs
            ]
            return [self._hold(connection, started, timeout_s) for connection in connections]

    def _open_or_raise(self) -> None:
        if self.closed:
            raise RuntimeError("caretz is ending its MCP servers")

    def _hold(self, connection: ServerConnection, started: float, timeout_s: float) -> Starting:
        """The connection opened and held on the loop (`ServerConnection.hold`)."""
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._holders.append(asyncio.run_coroutine_threadsafe(connection.hold(ready), self._loop))
        self._all.append(connection)
        allowed_s = connection.spec.startup_timeout_s or timeout_s
        return Starting(connection, ready, started, allowed_s)

    def settle(self, starting: Starting) -> Attempt:
        """How the server's start went, waiting until it is ready or its time is up."""
        left = starting.started + starting.allowed_s - time.monotonic()
        concurrent.futures.wait([starting.ready], timeout=max(0.0, left))
        connection = starting.connection
        attempt = self._outcome(connection, starting.ready, starting.allowed_s)
        attempt.duration_s = (connection.settled_at or time.monotonic()) - starting.started
        return attempt

    def _outcome(
        self,
        connection: ServerConnection,
        ready: concurrent.futures.Future[None],
        timeout_s: float,
    ) -> Attempt:
        spec = connection.spec
        if not ready.done():
            # The connection winds down (and its process ends) in the loop.
            self._loop.call_soon_threadsafe(connection.stop)
            own = f"mcpServers.{spec.name}.startupTimeout"
            give = (
                f"raise {own}"
                if spec.startup_timeout_s
                else f"raise mcp.startupTimeout, or {own} for it alone"
            )
            return Attempt(spec=spec, error=f"it was not ready within {timeout_s:g} s ({give})")
        error = ready.exception()
        if error is not None:
            described = mcp_connection.describe(error)
            if mcp_connection.needs_login(error):
                return Attempt(spec=spec, error=described, login_needed=True)
            return Attempt(spec=spec, error=self._with_stderr(spec, described))
        self._connections[spec.name] = connection
        return Attempt(
            spec=spec, error=None, tools=list(connection.tools), offers=connection.offers
        )

    def _errlog(self, spec: ServerSpec) -> IO[str]:
        """Where a stdio server's stderr goes: `<log dir>/<server>.log`, new each start."""
        if self.log_dir is None:
            handle = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (closed in close)
        else:
            path = private_data.make_dir(self.log_dir) / f"{server_part(spec.name)}.log"
            opened = private_data.open_file(path, os.O_WRONLY | os.O_TRUNC)
            handle = os.fdopen(opened, "w", encoding="utf-8")
        self._logs[spec.name] = handle
        return handle

    def log_path(self, name: str) -> Path | None:
        return self.log_dir / f"{server_part(name)}.log" if self.log_dir is not None else None

    def _with_stderr(self, spec: ServerSpec, reason: str) -> str:
        """A failure, with the last line the server wrote on stderr when there is one."""
        last = self.last_stderr_line(spec.name)
        return f"{reason}; its stderr ended with: {last}" if last else reason

    def last_stderr_line(self, name: str) -> str:
        path = self.log_path(name)
        if path is None:
            return ""
        try:
            lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
        except OSError:
            return ""
        return one_line(lines[-1], 200) if lines else ""

    # -- calls ---------------------------------------------------------------------------
    def call(
        self,
        server: str,
        tool: str,
        arguments: dict[str, Any],
        timeout_s: float,
        cancel: threading.Event,
    ) -> CallToolResult:
        """The server's result. Raises the connection's ServerDown, CallTimedOut,
        CallRefused or Unreadable, CallCancelled when `cancel` is set, and lets Ctrl-C through (the
        call is cancelled on the loop either way)."""
        return self.request(
            server,
            lambda connection: connection.call(tool, arguments, timeout_s),
            timeout_s,
            cancel,
        )

    def request(
        self,
        server: str,
        make: Callable[[ServerConnection], Coroutine[Any, Any, T]],
        timeout_s: float,
        cancel: threading.Event,
    ) -> T:
        """What `make(connection)` gets from the server (a call, a resource, a prompt),
        within `timeout_s`; raises as `call` does."""
        connection = self._connections.get(server)
        if connection is None or self.closed:
            raise mcp_connection.ServerDown("it is not running")
        future = asyncio.run_coroutine_threadsafe(make(connection), self._loop)
        deadline = time.monotonic() + timeout_s + CALL_GRACE_S
        try:
            while not future.done():
                concurrent.futures.wait([future], timeout=POLL_S)
                if cancel.is_set():
                    raise CallCancelled()
                if time.monotonic() > deadline:
                    raise mcp_connection.CallTimedOut(f"no answer within {timeout_s:g} s")
        except BaseException:
            future.cancel()
            raise
        return future.result()

    def ended(self, server: str) -> str | None:
        """Why a server that started has gone down since; None while it is up."""
        connection = self._connections.get(server)
        return connection.ended if connection is not None else None

    def mark_down(self, server: str, reason: str) -> None:
        connection = self._connections.get(server)
        if connection is not None and not self.closed:
            self._loop.call_soon_threadsafe(connection.stop, reason)

    # -- the end ---------------------------------------------------------------------------
    def close(self, timeout_s: float = CLOSE_WAIT_S) -> None:
        """End every connection and its server process, those still starting too, then
        the loop and its thread, within `timeout_s` in all (after a start under way has
        started its servers)."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            held = {connection.spec.name for connection in self._all}
            unheld = [spawned for name, spawned in self._spawned.items() if name not in held]
        deadline = time.monotonic() + timeout_s
        for connection in self._all:
            self._loop.call_soon_threadsafe(connection.stop)
        ending = [asyncio.run_coroutine_threadsafe(_end(spawned), self._loop) for spawned in unheld]
        concurrent.futures.wait([*self._holders, *ending], timeout=timeout_s)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=max(deadline - time.monotonic(), 0.1))
        if not self._thread.is_alive():
            self._loop.close()
        for handle in self._logs.values():
            handle.close()


async def _end(spawned: concurrent.futures.Future[asyncio.subprocess.Process]) -> None:
    """A stdio server's process that no connection holds yet (the SDK was still loading)."""
    try:
        process = await asyncio.wrap_future(spawned)
    except Exception:  # it did not start: nothing to end
        return
    await stop(process, started=False)
