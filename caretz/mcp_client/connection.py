"""One MCP server's connection, on the manager's event loop. It and what it imports of
caretz's (mcp_client/oauth.py) are the modules that import the SDK (`mcp`), with
mcp_client/login.py; only the manager imports it, when there is a server to start.

A connection is one task that opens the transport and the SDK's `ClientSession`, lists
the server's tools, then holds both open until told to stop: the SDK's transports and
sessions are context managers that must be left in the task that entered them. Calls
run as other tasks on the same loop and use the session the holding task keeps.

A stdio server's process is started before this module is imported (launch.py), so it
boots while the SDK loads; `_stdio` is the transport over that running process: one
JSON-RPC message a line each way, the process ended by the MCP spec's shutdown.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import IO, Any, TypeVar

import anyio
import httpx2
from mcp import ClientSession, Implementation, MCPError
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage
from mcp_types import (
    CONNECTION_CLOSED,
    REQUEST_TIMEOUT,
    CallToolResult,
    PaginatedRequestParams,
    jsonrpc_message_adapter,
)

from caretz import __version__, inbound
from caretz.mcp_client.launch import CommandNotFound, stop
from caretz.mcp_client.model import Offers, RemoteTool, ServerSpec
from caretz.mcp_client.oauth import LoginNeeded, session_auth
from caretz.mcp_client.offers import NotAnAnswer, offers
from caretz.mcp_client.tokens import TokenStore
from caretz.text import one_line

Spawned = concurrent.futures.Future[asyncio.subprocess.Process]
T = TypeVar("T")

CLIENT_INFO = Implementation(name="caretz", version=__version__)
HTTP_TIMEOUT_S = 30.0
HTTP_READ_TIMEOUT_S = 300.0  # a server may hold a response stream open this long
MAX_TOOL_PAGES = 50
MAX_REASON_CHARS = 300


class ServerDown(Exception):
    """The server is gone (it exited, or its connection broke); `reason` says how."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class CallTimedOut(Exception):
    pass


class CallRefused(Exception):
    """The server answered the call with a protocol error (an unknown tool, bad arguments)."""


class Unreadable(Exception):
    """The server sent a message caretz cannot read (no JSON, or not what MCP says)."""


class StartAbandoned(Exception):
    """The server was told to stop before it was ready (its time ran out, or caretz ends)."""

    def __str__(self) -> str:
        return "its start was called off"


class ServerConnection:
    def __init__(
        self,
        spec: ServerSpec,
        errlog: IO[str],
        spawned: Spawned | None = None,
        tokens: TokenStore | None = None,
    ):
        """`spawned`: a stdio server's process, being started (launch.spawn); `tokens`:
        the OAuth logins kept (an HTTP server's)."""
        self.spec = spec
        self.errlog = errlog
        self.spawned = spawned
        self.tokens = tokens
        self.session: ClientSession | None = None
        self.tools: list[RemoteTool] = []
        self.offers = Offers()  # its resources and prompts (mcp_client/offers.py)
        self.ended: str | None = None  # why the connection ended; None while it is open
        self.settled_at: float | None = None  # time.monotonic() when it was ready, or failed
        self._stop: asyncio.Event | None = None
        self._abandoned = False  # told to stop before it was ready
        # What waits for the server's answer now (its start, calls), and why the last of
        # them was ended early: the server sent a message the SDK could not read.
        self._waiting: set[asyncio.Future[Any]] = set()
        self._unreadable = ""

    async def hold(self, ready: concurrent.futures.Future[None]) -> None:
        """Open the connection and list the tools (then `ready` is done), and hold it until
        `stop`. A failure to start goes to `ready`; a later one ends the connection."""
        self._stop = asyncio.Event()
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport())
                session = await stack.enter_async_context(
                    ClientSession(
                        read, write, client_info=CLIENT_INFO, message_handler=self._on_message
                    )
                )
                await self._answer(session.initialize())
                self.tools = await self._answer(_all_tools(session))
                self.offers = await self._answer(offers(session))
                self.session = session
                self.settled_at = time.monotonic()
                ready.set_result(None)
                await self._stop.wait()
        except asyncio.CancelledError:
            self._failed(ready, TimeoutError("cancelled"))
            raise
        except BaseException as error:  # the SDK raises groups and OS errors alike
            self._failed(ready, error)
        finally:
            self.session = None

    def _failed(self, ready: concurrent.futures.Future[None], error: BaseException) -> None:
        self.ended = self.ended or describe(error)
        if not ready.done():
            self.settled_at = time.monotonic()
            ready.set_exception(error)

    def stop(self, reason: str | None = None) -> None:
        """End the connection (call on the loop); a stdio server's process is ended too.
        One still starting is cancelled: its start fails, saying so."""
        if reason is not None and self.ended is None:
            self.ended = reason
        if self.settled_at is None:  # whatever it waits for ends now, or it is not begun
            self._abandoned = True
            for waiting in list(self._waiting):
                waiting.cancel()
        elif self._stop is not None:
            self._stop.set()

    async def call(self, tool: str, arguments: dict[str, Any], timeout_s: float) -> CallToolResult:
        """The server's result; raises ServerDown, CallTimedOut or CallRefused."""
        result = await self.ask(
            lambda session: session.call_tool(tool, arguments, read_timeout_seconds=timeout_s)
        )
        if not isinstance(result, CallToolResult):
            raise CallRefused(f"the server sent a {type(result).__name__}, not a tool result")
        return result

    async def ask(self, request: Callable[[ClientSession], Coroutine[Any, Any, T]]) -> T:
        """The server's answer to `request` (a call, a resource's read, a prompt's get);
        raises ServerDown, CallTimedOut, CallRefused or Unreadable."""
        session = self.session
        if session is None:
            raise ServerDown(self.ended or "it is not connected")
        try:
            return await self._answer(request(session))
        except MCPError as error:
            if error.code == REQUEST_TIMEOUT:
                raise CallTimedOut(str(error)) from None
            if error.code == CONNECTION_CLOSED:
                raise self._down("its connection closed") from None
            raise CallRefused(str(error) or f"error {error.code}") from None
        except (OSError, httpx2.HTTPError, RuntimeError) as error:
            raise self._down(describe(error)) from None
        except NotAnAnswer as error:
            raise CallRefused(str(error)) from None
        except ValueError as error:  # the SDK's check of the answer (a pydantic error)
            raise Unreadable(one_line(describe(error), MAX_REASON_CHARS)) from None

    async def _on_message(self, message: Any) -> None:
        """The SDK hands over what it could not read as an exception: whatever waits for
        the server's answer gets none, so it ends now, saying why, not at its timeout."""
        if isinstance(message, Exception):
            self._unreadable = one_line(describe(message), MAX_REASON_CHARS)
            for waiting in list(self._waiting):
                waiting.cancel()

    async def _answer(self, answer: Coroutine[Any, Any, T]) -> T:
        """What `answer` awaits from the server; Unreadable when an unreadable message
        ended the wait, StartAbandoned when the start was called off."""
        if self._abandoned:
            answer.close()
            raise StartAbandoned()
        task = asyncio.ensure_future(answer)
        self._waiting.add(task)
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # this wait itself was cancelled (a timeout, the end)
            if self._abandoned:
                raise StartAbandoned() from None
            raise Unreadable(self._unreadable) from None
        finally:
            self._waiting.discard(task)

    def _down(self, reason: str) -> ServerDown:
        self.stop(reason)
        return ServerDown(self.ended or reason)

    def _transport(self) -> contextlib.AbstractAsyncContextManager[Any]:
        spec = self.spec
        if spec.transport == "stdio":
            assert self.spawned is not None, "a stdio server is spawned by the manager"
            return _stdio(self.spawned, lambda: self.session is not None)
        return http_transport(spec, session_auth(spec, self.tokens))


def http_transport(
    spec: ServerSpec, auth: httpx2.Auth | None
) -> contextlib.AbstractAsyncContextManager[Any]:
    """The streams of an HTTP server (streamable HTTP or SSE), its requests sent with `auth`
    (mcp_client/oauth.py: a session's is `session_auth`'s)."""
    if spec.transport == "sse":
        return sse_client(spec.url, headers=dict(spec.headers), auth=auth)
    return _streamable_http(spec, auth)


@contextlib.asynccontextmanager
async def _streamable_http(spec: ServerSpec, auth: httpx2.Auth | None) -> AsyncIterator[Any]:
    timeout = httpx2.Timeout(HTTP_TIMEOUT_S, read=HTTP_READ_TIMEOUT_S)
    async with (
        httpx2.AsyncClient(headers=dict(spec.headers), timeout=timeout, auth=auth) as client,
        streamable_http_client(spec.url, http_client=client) as streams,
    ):
        yield streams


@contextlib.asynccontextmanager
async def _stdio(spawned: Spawned, started: Callable[[], bool]) -> AsyncIterator[Any]:
    """The session's streams over the server's running process; `started`: whether it
    answered the handshake (how patiently it is ended)."""
    process = await asyncio.wrap_future(spawned)
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout
    to_session, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, from_session = anyio.create_memory_object_stream[SessionMessage](0)

    async def read() -> None:
        async with to_session:
            pending = b""
            while chunk := await stdout.read(65536):
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    try:
                        await to_session.send(_message(line))
                    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                        return

    async def write() -> None:
        async with from_session:
            try:
                async for message in from_session:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    stdin.write(data.encode() + b"\n")
                    await stdin.drain()
            except (OSError, RuntimeError):  # the server is gone: the session sees it end
                await to_session.aclose()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read)
        tasks.start_soon(write)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                read_stream.close()
                write_stream.close()
                await stop(process, started())
            tasks.cancel_scope.cancel()


def _message(line: bytes) -> SessionMessage | Exception:
    """One line from the server, read as all data from outside is (caretz/inbound.py:
    strict JSON, no key twice, bounded depth); one that is not a JSON-RPC message is
    handed on as an error, as the SDK's own transport does."""
    try:
        data = inbound.load_json(line, "the server's message")
        return SessionMessage(jsonrpc_message_adapter.validate_python(data, by_name=False))
    except ValueError as error:  # BadInput, or the SDK's check of the message
        return error


async def _all_tools(session: ClientSession) -> list[RemoteTool]:
    tools: list[RemoteTool] = []
    cursor: str | None = None
    for _ in range(MAX_TOOL_PAGES):
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        listed = await session.list_tools(params=params)
        tools += [_remote(tool) for tool in listed.tools]
        cursor = listed.next_cursor
        if not cursor:
            break
    return tools


def _remote(tool: Any) -> RemoteTool:
    """A listed tool as caretz takes it (caretz/inbound.py); raises inbound.BadInput."""
    name = inbound.text(tool.name)
    schema = inbound.checked(dict(tool.input_schema), f"the input schema of its tool {name!r}")
    return RemoteTool(name, inbound.text(tool.description), schema, _read_only(tool))


def _read_only(tool: Any) -> bool:
    """The tool's readOnlyHint (the SDK names it `read_only_hint`; older ones the wire name)."""
    annotations = getattr(tool, "annotations", None)
    if annotations is None:
        return False
    hint = getattr(annotations, "read_only_hint", None)
    return (hint if hint is not None else getattr(annotations, "readOnlyHint", None)) is True


def needs_login(error: BaseException) -> bool:
    """Whether a failure is the server asking for an OAuth login caretz does not have."""
    return isinstance(_cause(error), LoginNeeded)


def _cause(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def describe(error: BaseException) -> str:
    """One line for a failure, looking inside exception groups for the first real cause."""
    error = _cause(error)
    if isinstance(error, MCPError):
        return "its connection closed" if error.code == CONNECTION_CLOSED else str(error)
    if isinstance(error, CommandNotFound):
        return str(error)
    if isinstance(error, Unreadable):
        return f"it sent a message caretz cannot read ({error})"
    if isinstance(error, inbound.BadInput | LoginNeeded):
        return str(error)
    text = str(error).strip()
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
