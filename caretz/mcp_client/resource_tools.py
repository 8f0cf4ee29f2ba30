"""The model's two resource tools, offered once a server ready has resources: Claude
Code's ListMcpResourcesTool and ReadMcpResourceTool as `list_mcp_resources` and
`read_mcp_resource`.

Both only read (effect "read": they run unasked in every mode, read-only ones too, and
beside other reads of one reply), under the permission rules as any tool: besides their
own names, a call about server S answers to `mcp__S__<tool>` (`rule_names`), so a
rule on `mcp__S` or `mcp__S__*` covers reading S's resources too. Their results pass
the registry's result cap like any tool's, and a failed read is a failed result the loop
guard counts.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from caretz.mcp_client.names import PREFIX, server_part
from caretz.mcp_client.resources import ResourceProblem
from caretz.messages import ToolSpec
from caretz.tools.base import (
    Param,
    Tool,
    ToolContext,
    ToolInterrupted,
    ToolResult,
    interrupted_result,
    object_schema,
)

if TYPE_CHECKING:
    from caretz.mcp_client.resources import McpResources

READ = "read_mcp_resource"
LIST = "list_mcp_resources"
LISTED_MAX = 500  # resources named in one listing


def resource_tools(resources: McpResources) -> list[Tool]:
    return [ListMcpResources(resources), ReadMcpResource(resources)]


def rule_name(tool: str, args: dict[str, Any]) -> tuple[str, ...]:
    """The name a call about one server answers to in permission rules: `mcp__S__tool`."""
    server = args.get("server")
    return (f"{PREFIX}{server_part(server)}__{tool}",) if isinstance(server, str) else ()


class ReadMcpResource:
    effect = "read"

    def __init__(self, resources: McpResources):
        self.resources = resources
        self.spec = ToolSpec(
            READ,
            "Read a resource of an MCP server by its URI (list_mcp_resources lists them). "
            "Text comes back as it is; an image as an image; other binary content is "
            "described, not shown.",
            object_schema(
                server=Param("string", "the MCP server's name", required=True),
                uri=Param("string", "the resource's URI, as listed", required=True),
            ),
        )

    def rule_names(self, args: dict[str, Any]) -> tuple[str, ...]:
        return rule_name(READ, args)

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        started = time.monotonic()
        server, uri = str(args["server"]), str(args["uri"])
        try:
            text, images = self.resources.read(server, uri, ctx.cancel)
        except KeyboardInterrupt as interrupt:
            stopped = interrupted_result(time.monotonic() - started, f"{uri} was not read")
            raise ToolInterrupted(stopped, interrupt) from None
        except ResourceProblem as problem:
            return ToolResult(ok=False, output=str(problem), duration_s=time.monotonic() - started)
        if images and ctx.no_images is not None:  # the text says what each one was
            text, images = f"{text}\n[the images were not sent: {ctx.no_images}]", []
        return ToolResult(
            ok=True, output=text, duration_s=time.monotonic() - started, images=images
        )


class ListMcpResources:
    effect = "read"

    def __init__(self, resources: McpResources):
        self.resources = resources
        self.spec = ToolSpec(
            LIST,
            "List the resources the MCP servers offer (URI, name, type, description); "
            "read one with read_mcp_resource.",
            object_schema(server=Param("string", "only this server's (default: every server's)")),
        )

    def rule_names(self, args: dict[str, Any]) -> tuple[str, ...]:
        return rule_name(LIST, args)

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        asked = args.get("server")
        servers = [str(asked)] if asked is not None else self.resources.names()
        lines: list[str] = []
        failed: list[str] = []
        for server in servers:
            if asked is None and _denied(ctx, server):
                continue  # a server the rules keep from the model is not listed
            try:
                listed = self.resources.listed(server, ctx.cancel)
            except ResourceProblem as problem:
                failed.append(str(problem))
                continue
            lines += [_line(server, resource) for resource in listed]
        shown = lines[:LISTED_MAX]
        if len(lines) > len(shown):
            shown.append(f"[… and {len(lines) - len(shown)} more; name a server to narrow]")
        text = "\n".join([*shown, *failed]) or "(no resources)"
        return ToolResult(ok=bool(lines) or not failed, output=text)


def _line(server: str, resource: Any) -> str:
    about = " · ".join(p for p in (resource.name, resource.mime_type, resource.description) if p)
    return f"{server}: {resource.uri}" + (f"  ({about})" if about else "")


def _denied(ctx: ToolContext, server: str) -> bool:
    if ctx.rules is None:
        return False
    [name] = rule_name(LIST, {"server": server})
    return ctx.rules.check(name, {}, ctx.workspace).outcome == "deny"
