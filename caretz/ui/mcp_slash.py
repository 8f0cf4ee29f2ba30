"""`/mcp` in the interactive session: the session's MCP servers, their status and tools;
`/mcp approve` starts a project's; `/mcp login NAME` logs in to an HTTP one and starts it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

from caretz.config_base import ConfigError
from caretz.lazy import lazy_module
from caretz.text import plural

if TYPE_CHECKING:
    from caretz.app import mcp_approval
    from caretz.ui import mcp_lines
else:
    mcp_lines = lazy_module("caretz.ui.mcp_lines")  # the MCP client's model: once /mcp is typed
    mcp_approval = lazy_module("caretz.app.mcp_approval")  # the login: once /mcp login is typed

if TYPE_CHECKING:
    from caretz.ui.session_control import SessionControl


def mcp_slash(repl: SessionControl, argument: str) -> None:
    """`/mcp`: the session's servers, their status and tools; `/mcp approve [NAME…]`
    approves servers of the project's `.mcp.json` and starts them now."""
    words = argument.split()
    if words and words[0] == "approve":
        approve_in_session(repl, words[1:])
        return
    if len(words) == 2 and words[0] == "login":
        login_in_session(repl, words[1])
        return
    if words:
        repl.error(
            "/mcp lists the MCP servers; /mcp approve [NAME…] starts a project's; "
            "/mcp login NAME logs in to one that asks for it"
        )
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


def login_in_session(repl: SessionControl, name: str) -> None:
    def say(url: str) -> None:
        repl.info(f"log in to {name} in your browser; if none opens, visit:")
        repl.console.print(url, highlight=False, soft_wrap=True)

    try:
        status = mcp_approval.login_and_start(repl.session, name, say)
    except ConfigError as error:
        repl.error(str(error))
        return
    except Exception as error:  # LoginFailed, saying why in one line
        repl.error(f"cannot log in to MCP server {name!r}: {error}")
        return
    if status.state == "ready":
        repl.info(f"{name}: logged in and started, {plural(len(status.tools), 'tool')}")
    else:
        repl.error(f"{name}: logged in, {status.state}: {status.detail}")
