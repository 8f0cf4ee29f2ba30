"""`/mcp` in the interactive session: the session's MCP servers, their status and tools;
`/mcp approve` starts a project's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

from caretz.config_base import ConfigError
from caretz.lazy import lazy_module
from caretz.text import plural

if TYPE_CHECKING:
    from caretz.ui import mcp_lines
else:
    mcp_lines = lazy_module("caretz.ui.mcp_lines")  # the MCP client's model: once /mcp is typed

if TYPE_CHECKING:
    from caretz.ui.session_control import SessionControl


def mcp_slash(repl: SessionControl, argument: str) -> None:
    """`/mcp`: the session's servers, their status and tools; `/mcp approve [NAME…]`
    approves servers of the project's `.mcp.json` and starts them now."""
    words = argument.split()
    if words and words[0] == "approve":
        approve_in_session(repl, words[1:])
        return
    if words:
        repl.error("/mcp lists the MCP servers; /mcp approve [NAME…] starts a project's")
        return
    mcp = repl.session.mcp
    for line in mcp_lines.server_lines(mcp.statuses() if mcp is not None else []):
        style = "dim" if line.startswith("  ") else "bold"
        repl.console.print(f"[{style}]{escape(line)}[/]", highlight=False)


def approve_in_session(repl: SessionControl, names: list[str]) -> None:
    try:
        with repl.console.status("starting MCP servers…", spinner="dots"):
            statuses = repl.session.approve_servers(names)
    except ConfigError as error:
        repl.error(str(error))
        return
    if not statuses:
        repl.info("approved; nothing waited to start (/mcp shows the servers)")
    for status in statuses:
        if status.state == "ready":
            repl.info(f"{status.name}: approved and started, {plural(len(status.tools), 'tool')}")
        else:
            repl.error(f"{status.name}: approved, {status.state}: {status.detail}")
