"""The MCP servers' records: how each started (or did not), and one going down."""

from __future__ import annotations

from dataclasses import field
from typing import ClassVar

from caretz.session.records.base import McpRecord, optional, record


@record
class McpServerOpened(McpRecord):
    """The fields every server's start record shares."""

    server: str = ""
    source: str = ""
    transport: str = ""


@record
class McpServerStarted(McpServerOpened):
    TYPE: ClassVar[str] = "Mcp.ServerStarted"
    tools: list[str] = field(default_factory=list)
    duration_s: float | None = None
    background: bool | None = optional()  # it started behind the prompt


@record
class McpServerAwaited(McpRecord):
    """A call of a tool whose server was still starting waited for it."""

    TYPE: ClassVar[str] = "Mcp.ServerAwaited"
    server: str = ""
    tool: str = ""
    timeout_s: float = 0.0


@record
class McpServerFailed(McpServerOpened):
    TYPE: ClassVar[str] = "Mcp.ServerFailed"
    reason: str = ""


@record
class McpServerNotStarted(McpServerOpened):
    TYPE: ClassVar[str] = "Mcp.ServerNotStarted"
    state: str = ""
    reason: str = ""


@record
class McpServerDown(McpRecord):
    TYPE: ClassVar[str] = "Mcp.ServerDown"
    server: str = ""
    reason: str = ""


@record
class McpResourceAttached(McpRecord):
    """A prompt's `@server:uri` mention: the resource read and attached to the message."""

    TYPE: ClassVar[str] = "Mcp.ResourceAttached"
    server: str = ""
    uri: str = ""
    chars: int = 0
    images: int = 0


@record
class McpResourceNotAttached(McpRecord):
    """A prompt's `@server:uri` mention that could not be attached: it stays text."""

    TYPE: ClassVar[str] = "Mcp.ResourceNotAttached"
    server: str = ""
    uri: str = ""
    reason: str = ""


@record
class McpPromptExpanded(McpRecord):
    """A `/mcp__server__prompt` command: the server's prompt got, with its arguments."""

    TYPE: ClassVar[str] = "Mcp.PromptExpanded"
    server: str = ""
    prompt: str = ""
    arguments: dict[str, str] = field(default_factory=dict)
    chars: int = 0
