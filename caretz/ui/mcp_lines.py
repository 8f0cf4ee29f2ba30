"""MCP servers as text: the `mcp:` lines of a run, and the listing of `caretz mcp list`
and `/mcp`."""

from __future__ import annotations

from caretz.mcp_client.model import ServerStatus
from caretz.session.records import mcp as records
from caretz.session.records.base import Record
from caretz.text import plural, shorten

DESCRIPTION_CHARS = 80


def mcp_line(event: Record, detailed: bool = False, headless: bool = False) -> str | None:
    """The one line an `Mcp.*` event gets in a run's output, or None. A server ready is
    news at a prompt; `headless` (`-p`) says it only in detailed output."""
    if isinstance(event, records.McpServerFailed):
        return f"mcp: server {event.server!r} did not start: {event.reason}; going on without it"
    if isinstance(event, records.McpServerDown):
        return f"mcp: server {event.server!r} is down: {event.reason}; its tools fail from now on"
    if isinstance(event, records.McpServerNotStarted) and event.state == "not approved":
        server = event.server
        return (
            f"mcp: server {server!r} of {event.source} runs outside the sandbox and is not "
            f"started until you approve it: /mcp approve {server}, or caretz mcp approve {server}"
        )
    if isinstance(event, records.McpServerNotStarted) and event.state == "needs login":
        server = event.server
        how = f"`caretz mcp login {server}`" if headless else f"/mcp login {server}"
        return f"mcp: server {server!r} needs a login: run {how}; going on without it"
    if isinstance(event, records.McpServerStarted) and event.background and not headless:
        tools = plural(len(event.tools or []), "tool")
        took = f"{event.duration_s or 0.0:.1f} s"
        return f"mcp: server {event.server!r} ready ({took}): its {tools} join the conversation"
    if isinstance(event, records.McpServerStarted) and detailed:
        tools = plural(len(event.tools or []), "tool")
        return f"mcp: server {event.server!r} ready: {tools} ({event.duration_s:.1f} s)"
    if isinstance(event, records.McpResourceAttached) and (detailed or not headless):
        images = f", {plural(event.images, 'image')}" if event.images else ""
        return f"mcp: attached @{event.server}:{event.uri} ({event.chars:,} characters{images})"
    if isinstance(event, records.McpResourceNotAttached):
        return f"mcp: @{event.server}:{event.uri} was not attached: {event.reason}"
    if isinstance(event, records.McpPromptExpanded) and (detailed or not headless):
        return (
            f"mcp: prompt {event.prompt!r} of server {event.server!r} ({event.chars:,} characters)"
        )
    if isinstance(event, records.McpServerAwaited):
        return (
            f"mcp: {event.tool} waits for server {event.server!r} to start "
            f"(at most {event.timeout_s:g} s)"
        )
    return None


def server_lines(statuses: list[ServerStatus]) -> list[str]:
    """Each server (name, status, transport, what it runs, where it is configured), then
    its tools with the first line of each description, or why it is not there."""
    if not statuses:
        return ["no MCP servers configured (mcpServers in profiles.json, or .mcp.json)"]
    lines = []
    width = max(len(status.name) for status in statuses)
    for status in statuses:
        took = f" · {status.duration_s:.1f} s" if status.state in ("ready", "down") else ""
        lines.append(
            f"{status.name:<{width}}  {status.state} · {status.transport} · "
            f"{status.shown} · {status.source}{took}"
        )
        if status.detail:
            lines.append(f"  {status.detail}")
        tool_width = max((len(tool.name) for tool in status.tools), default=0)
        lines += [
            f"  {tool.name:<{tool_width}}  {shorten(tool.description, DESCRIPTION_CHARS)}"
            for tool in status.tools
        ]
    return lines
