"""The MCP servers' records: how each started (or did not), and one going down."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from caretz.session.records.base import Record


@dataclass(frozen=True, kw_only=True)
class McpRecord(Record):
    """Any of the MCP servers' records (`Mcp.*`)."""


@dataclass(frozen=True, kw_only=True)
class McpServerOpened(McpRecord):
    """The fields every server's start record shares."""

    server: str = ""
    source: str = ""
    transport: str = ""


@dataclass(frozen=True, kw_only=True)
class McpServerStarted(McpServerOpened):
    TYPE: ClassVar[str] = "Mcp.ServerStarted"
    tools: list[str] = field(default_factory=list)
    duration_s: float | None = None


@dataclass(frozen=True, kw_only=True)
class McpServerFailed(McpServerOpened):
    TYPE: ClassVar[str] = "Mcp.ServerFailed"
    reason: str = ""


@dataclass(frozen=True, kw_only=True)
class McpServerNotStarted(McpServerOpened):
    TYPE: ClassVar[str] = "Mcp.ServerNotStarted"
    state: str = ""
    reason: str = ""


@dataclass(frozen=True, kw_only=True)
class McpServerDown(McpRecord):
    TYPE: ClassVar[str] = "Mcp.ServerDown"
    server: str = ""
    reason: str = ""
