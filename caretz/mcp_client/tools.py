"""An MCP server's tool as a caretz tool, in the session's one tool registry.

So the registry's argument checks, the permission check (an MCP tool runs outside the
sandbox: its `effect` is "external"), the hooks, the loop guard and subagents treat it
as any other tool; it differs only in where its `run` goes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from caretz.messages import ToolSpec
from caretz.tools.base import ToolContext, ToolResult

MAX_DESCRIPTION_CHARS = 2000


class ToolCaller(Protocol):
    def call_tool(self, tool: McpTool, args: dict[str, Any], ctx: ToolContext) -> ToolResult: ...


class McpTool:
    effect = "external"  # for the permission check (tools/base.py)

    def __init__(
        self,
        name: str,
        server: str,
        remote: str,
        description: str,
        schema: Mapping[str, Any],
        caller: ToolCaller,
        *,
        read_only: bool = False,
    ):
        self.server = server
        # The server's readOnlyHint: such calls of one reply may run at the same time
        # (ToolRegistry.runs_in_parallel). It decides nothing about permissions.
        self.read_only = read_only
        self.remote = remote  # the server's own name for the tool
        self.caller = caller
        self.spec = ToolSpec(name, _description(server, description), object_schema(schema))

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return self.caller.call_tool(self, args, ctx)


def _description(server: str, text: str) -> str:
    text = text.strip() or "(the server gives no description)"
    if len(text) > MAX_DESCRIPTION_CHARS:
        text = text[: MAX_DESCRIPTION_CHARS - 1].rstrip() + "…"
    return f"{text}\n(MCP server {server!r})"


def object_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The server's input schema, as an object schema both wire protocols take."""
    parameters = dict(schema) if isinstance(schema, Mapping) else {}
    parameters["type"] = "object"
    if not isinstance(parameters.get("properties"), Mapping):
        parameters["properties"] = {}
    return parameters
