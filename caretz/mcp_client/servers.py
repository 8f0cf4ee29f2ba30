"""A session's MCP servers: starting them, their tools, a call's result, their statuses.

A server that fails to start is left out (its status says why) and the session goes on.
A call that cannot complete (the server crashed, hung past `mcp.callTimeout`, refused
the call, or answered with more than `mcp.maxResultChars`) is a failed tool result the
model reads; a server that crashed is marked down, and its tools fail at once from then
on, saying so.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from caretz import inbound
from caretz.lazy import lazy_module
from caretz.mcp_client.background import BackgroundStart
from caretz.mcp_client.config import McpConfig
from caretz.mcp_client.manager import Attempt, CallCancelled, McpManager
from caretz.mcp_client.model import (
    Offers,
    RemotePrompt,
    ServerSpec,
    ServerStatus,
    State,
    ToolInfo,
)
from caretz.mcp_client.names import PREFIX, server_part, unique_tool_names
from caretz.mcp_client.resource_tools import resource_tools
from caretz.mcp_client.resources import McpResources, ResourceProblem
from caretz.mcp_client.results import over_cap, result_content
from caretz.mcp_client.tokens import TokenStore
from caretz.mcp_client.tools import McpTool
from caretz.session.records import mcp as records
from caretz.session.records.base import Record
from caretz.tools.base import Tool, ToolContext, ToolInterrupted, ToolResult, interrupted_result

if TYPE_CHECKING:
    from caretz.mcp_client import connection as mcp_connection
else:
    # The only module importing the MCP SDK: loaded by the time a server answers a call.
    mcp_connection = lazy_module("caretz.mcp_client.connection")

Emit = Callable[[Record], Any]


def _quiet(record: Record) -> None:
    pass


class McpServers:
    def __init__(
        self,
        config: McpConfig,
        log_dir: Path | None = None,
        emit: Emit = _quiet,
        tokens: TokenStore | None = None,
    ):
        self.config = config
        self.log_dir = log_dir  # where each stdio server's stderr goes
        self.tokens = tokens  # the HTTP servers' OAuth logins
        self.manager: McpManager | None = None  # made when the first server starts
        self.emit = emit  # the session log's
        self.tools: list[Tool] = []  # McpTools, and the resource tools once one has resources
        self.offers: dict[str, Offers] = {}  # what each server ready offers besides tools
        self.prompts: dict[str, tuple[str, RemotePrompt]] = {}  # mcp__s__p → (server, prompt)
        self.resources = McpResources(self)
        self._statuses: dict[str, ServerStatus] = {}
        self._down: dict[str, str] = {}
        self._order: list[str] = []
        self._lock = threading.RLock()  # the manager's making; collecting servers started
        self._closed = False
        self.background: BackgroundStart | None = None  # servers starting behind a prompt

    @classmethod
    def start(
        cls,
        specs: list[ServerSpec],
        not_started: list[ServerStatus],
        config: McpConfig,
        log_dir: Path | None = None,
        order: list[str] | None = None,
        emit: Emit = _quiet,
        tokens: TokenStore | None = None,
    ) -> McpServers:
        """Start `specs` in parallel, each given `mcp.startupTimeout`; `order` lists the
        servers as configured, as `statuses` shows them."""
        servers = cls(config, log_dir, emit, tokens)
        servers._statuses = {status.name: status for status in not_started}
        servers._order = list(order or [])
        servers.launch(specs)
        return servers

    @classmethod
    def start_in_background(
        cls,
        specs: list[ServerSpec],
        not_started: list[ServerStatus],
        config: McpConfig,
        log_dir: Path | None = None,
        order: list[str] | None = None,
        emit: Emit = _quiet,
        tokens: TokenStore | None = None,
    ) -> McpServers:
        """Start `specs` behind the prompt: they are "starting" until `collect` takes
        them in; a call of a tool of one waits for it (`wait_for`)."""
        servers = cls(config, log_dir, emit, tokens)
        servers._statuses = {status.name: status for status in not_started}
        servers._order = list(order or [])
        for spec in specs:
            servers._statuses[spec.name] = ServerStatus(
                name=spec.name,
                source=spec.source,
                transport=spec.transport,
                shown=spec.shown,
                state="starting",
            )
        if specs:
            servers.background = BackgroundStart(specs, config.startup_timeout_s, servers._made)
            servers.background.start()
        return servers

    def _made(self) -> McpManager | None:
        """The manager, made on first use (None once the servers are closing)."""
        with self._lock:
            if self._closed:
                return None
            if self.manager is None:
                self.manager = McpManager(self.log_dir, self.tokens)
            return self.manager

    # -- servers that started in the background ----------------------------------------------
    def has_settled(self) -> bool:
        """Whether a server started in the background waits to be collected."""
        self._go()
        return self.background is not None and not self.background.settled.empty()

    def _go(self) -> None:
        """The session is up and looks at its servers: the background start may load
        the SDK now."""
        if self.background is not None:
            self.background.go.set()

    def collect(self) -> list[str]:
        """Take in the servers that finished starting in the background: their tools and
        statuses, their events (written in the calling thread). Returns their names."""
        background = self.background
        if background is None:
            return []
        self._go()
        names = []
        with self._lock:
            while not background.settled.empty():
                attempt = background.settled.get()
                self._add(attempt)
                names.append(attempt.spec.name)
        if names:
            self.report(names, background=True)
        return names

    def joined(self) -> list[Tool]:
        """The tools of every server ready now (a registry's late tools)."""
        self.collect()
        return list(self.tools)

    def wait_for(self, tool: str, cancel: threading.Event) -> str | None:
        """For a call of `tool` that no registry has: when its server is still starting,
        wait for it (within its startupTimeout; Ctrl-C and `cancel` end the wait). None
        when there was nothing to wait for or it is ready now; else why the tool is not
        there (the server did not start, before the call or while it waited)."""
        server = self._background_server(tool)
        return None if server is None else self.await_server(server, cancel, tool)

    def await_server(self, server: str, cancel: threading.Event, what: str) -> str | None:
        """Wait for `server` when it is still starting (for `what`: a tool, a mention, a
        prompt command); None when it is ready now (or nothing to wait for), else why not."""
        background = self.background
        if background is not None and server in background.done:
            self._go()
            if background.waiting(server):
                timeout = background.allowed_s[server]
                self.emit(records.McpServerAwaited(server=server, tool=what, timeout_s=timeout))
                background.wait(server, cancel)
            self.collect()
        status = self._statuses.get(server)
        if status is None or status.state == "ready":
            return None
        if status.state == "starting":
            return f"MCP server {server!r} is still starting; try {what} again in a moment"
        reason = status.detail or status.state
        return f"MCP server {server!r} did not start: {reason}; {what} cannot run"

    def _background_server(self, tool: str) -> str | None:
        """The server started in the background whose tools are named like `tool`."""
        background = self.background
        if background is None or not tool.startswith(PREFIX):
            return None
        for name in background.done:
            if tool.startswith(f"{PREFIX}{server_part(name)}__"):
                return name
        return None

    def launch(self, specs: list[ServerSpec]) -> list[Tool]:
        """Start more servers, in parallel; returns the tools of those that started."""
        if not specs:
            return []
        made = self.manager is None
        manager = self._made()
        if manager is None:
            return []
        try:
            attempts = manager.start(specs, self.config.startup_timeout_s)
        except BaseException:  # Ctrl-C while they start: none may be left running
            if made:
                manager.close()
            raise
        before = len(self.tools)
        for attempt in attempts:
            self._add(attempt)
            if attempt.spec.name not in self._order:
                self._order.append(attempt.spec.name)
        return self.tools[before:]

    def report_to(self, emit: Emit) -> None:
        """The servers carry on in another session (/clear, /resume): its log from now on."""
        self.emit = emit

    def knows(self, name: str) -> bool:
        return name in self._statuses

    def note(self, statuses: list[ServerStatus]) -> None:
        """Statuses of servers that will not start (after the session's start)."""
        for status in statuses:
            self._statuses[status.name] = status
            if status.name not in self._order:
                self._order.append(status.name)

    def _add(self, attempt: Attempt) -> None:
        spec = attempt.spec
        state: State = "needs login" if attempt.login_needed else "failed"
        status = ServerStatus(
            name=spec.name,
            source=spec.source,
            transport=spec.transport,
            shown=spec.shown,
            state=state,
            detail=attempt.error or "",
        )
        if attempt.error is None:
            names = unique_tool_names(spec.name, [tool.name for tool in attempt.tools])
            tools = [
                McpTool(names[remote.name], spec.name, remote.name, remote.description,
                        remote.input_schema, self, read_only=remote.read_only)
                for remote in attempt.tools
            ]  # fmt: skip
            self.tools += tools
            self._offer(spec.name, attempt.offers)
            infos = tuple(
                ToolInfo(tool.spec.name, tool.remote, _first_line(tool)) for tool in tools
            )
            status = ServerStatus(
                name=spec.name,
                source=spec.source,
                transport=spec.transport,
                shown=spec.shown,
                state="ready",
                tools=infos,
            )
        self._statuses[spec.name] = dataclasses.replace(status, duration_s=attempt.duration_s)

    def _offer(self, server: str, offers: Offers) -> None:
        """A ready server's resources and prompts; the resource tools join with the first
        server that has resources."""
        if offers.resources and not any(o.resources for o in self.offers.values()):
            self.tools += resource_tools(self.resources)
        self.offers[server] = offers
        names = unique_tool_names(server, [prompt.name for prompt in offers.prompts])
        for prompt in offers.prompts:
            self.prompts[names[prompt.name]] = (server, prompt)

    def prompt_named(self, command: str, cancel: threading.Event) -> tuple[str, RemotePrompt]:
        """The server and prompt of `/mcp__server__prompt` (`command` without the `/`), its
        server awaited when still starting; raises ResourceProblem."""
        server = self._background_server(command)
        if command not in self.prompts and server is not None:
            problem = self.await_server(server, cancel, f"/{command}")
            if problem is not None:
                raise ResourceProblem(problem)
        found = self.prompts.get(command)
        if found is None:
            known = ", ".join(f"/{name}" for name in sorted(self.prompts)) or "none"
            raise ResourceProblem(f"no MCP prompt /{command} (the servers' prompts: {known})")
        return found

    def down_reason(self, server: str) -> str | None:
        return self._down.get(server)

    # -- what the session shows -------------------------------------------------------------
    def statuses(self) -> list[ServerStatus]:
        """Every configured server as it stands now, those that went down included."""
        shown = []
        place = {name: index for index, name in reversed(list(enumerate(self._order)))}
        for status in sorted(self._statuses.values(), key=lambda s: place.get(s.name, 0)):
            reason = self._down.get(status.name)
            if reason is not None:
                status = dataclasses.replace(status, state="down", detail=reason)
            shown.append(status)
        return shown

    def report(self, names: list[str] | None = None, background: bool = False) -> None:
        """One event per server (or per server named), once the session log is open; those
        still starting report when they are collected (`background`)."""
        for status in list(self._statuses.values()):
            if (names is not None and status.name not in names) or status.state == "starting":
                continue
            where: dict[str, Any] = {
                "server": status.name,
                "source": status.source,
                "transport": status.transport,
            }
            if status.state == "ready":
                tools = [tool.name for tool in status.tools]
                started = records.McpServerStarted(
                    **where,
                    tools=tools,
                    duration_s=status.duration_s,
                    background=background or None,
                )
                self.emit(started)
            elif status.state == "failed":
                self.emit(records.McpServerFailed(**where, reason=status.detail))
            else:
                self.emit(
                    records.McpServerNotStarted(**where, state=status.state, reason=status.detail)
                )

    def add_tools(self, registry: Any) -> None:
        """Put the servers' tools in a session's tool registry (`ToolRegistry.add`); those
        of servers still starting join it once ready (`ToolRegistry.late`)."""
        for tool in self.tools:
            registry.add(tool)
        if self.background is not None:
            registry.late = self

    # -- one call ------------------------------------------------------------------------
    def call_tool(self, tool: McpTool, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        name, server = tool.spec.name, tool.server
        if server in self._down or self.manager is None:
            return self._down_result(tool, self._down.get(server, "it is not running"))
        started = time.monotonic()
        timeout = self.config.call_timeout_s
        try:
            result = self.manager.call(server, tool.remote, args, timeout, ctx.cancel)
        except KeyboardInterrupt as interrupt:
            stopped = interrupted_result(time.monotonic() - started, ACTED)
            raise ToolInterrupted(stopped, interrupt) from None
        except CallCancelled:
            return _stopped(started, "cancelled")
        except mcp_connection.CallTimedOut:
            text = f"no answer from MCP server {server!r} within {timeout:g} s (mcp.callTimeout)"
            return _failed(started, f"{text}; the call was cancelled, but {ACTED}", "timeout")
        except mcp_connection.CallRefused as refusal:
            return _failed(started, f"MCP server {server!r} refused the {name} call: {refusal}")
        except mcp_connection.Unreadable as unreadable:
            said = f"MCP server {server!r} answered the {name} call with a message caretz"
            return _failed(started, f"{said} cannot read ({unreadable}); {ACTED}")
        except mcp_connection.ServerDown as down:
            self.went_down(server, down.reason)
            return self._down_result(tool, self._down[server], started)
        try:
            text, images = result_content(list(result.content), result.structured_content, name)
        except inbound.BadInput as problem:
            said = f"MCP server {server!r} answered the {name} call with a result caretz"
            return _failed(started, f"{said} does not take: {problem}; {ACTED}")
        if len(text) > self.config.max_result_chars:
            return _failed(started, over_cap(name, text, self.config.max_result_chars))
        if images and ctx.no_images is not None:  # the text says what each one was
            text, images = f"{text}\n[the images were not sent: {ctx.no_images}]", []
        return ToolResult(
            ok=not result.is_error,
            output=text,
            duration_s=time.monotonic() - started,
            images=images,
        )

    def went_down(self, server: str, reason: str) -> None:
        if server in self._down:
            return
        assert self.manager is not None
        last = self.manager.last_stderr_line(server)
        self._down[server] = f"{reason}; its stderr ended with: {last}" if last else reason
        self.manager.mark_down(server, reason)
        self.emit(records.McpServerDown(server=server, reason=self._down[server]))

    def _down_result(self, tool: McpTool, reason: str, started: float | None = None) -> ToolResult:
        text = (
            f"MCP server {tool.server!r} is down ({reason}); {tool.spec.name} did not complete, "
            "and the server's tools cannot run for the rest of this session. "
            "Do the task another way, or tell the user."
        )
        duration = time.monotonic() - started if started is not None else 0.0
        return ToolResult(ok=False, output=text, duration_s=duration)

    def close(self) -> None:
        """End every server (its process too), those still starting too; the servers'
        tools fail from then on."""
        with self._lock:
            self._closed = True
            manager = self.manager
        if manager is not None:
            manager.close()


ACTED = "the server may have acted on it already"


def _failed(started: float, text: str, ended_by: str | None = None) -> ToolResult:
    duration = time.monotonic() - started
    return ToolResult(ok=False, output=text, duration_s=duration, ended_by=ended_by)


def _stopped(started: float, ended_by: str) -> ToolResult:
    """A call a cancelled turn stopped: it ran, and may have done something."""
    duration = time.monotonic() - started
    text = f"[{ended_by} after {duration:.1f} s; {ACTED}]"
    return ToolResult(ok=False, output=text, duration_s=duration, ended_by=ended_by)


def _first_line(tool: McpTool) -> str:
    lines = tool.spec.description.strip().splitlines()
    return lines[0] if lines else ""
