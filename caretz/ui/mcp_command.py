"""`caretz mcp list` and `caretz mcp approve`, and `/mcp` in the interactive session: the
configured MCP servers, from the profile and the project's `.mcp.json`."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape

from caretz.text import plural
from caretz.usage_error import fail

if TYPE_CHECKING:
    from caretz.config.settings import Settings
    from caretz.ui.session_control import SessionControl


def list_servers(settings: Settings, output: str, workspace: Path | None = None) -> int:
    """Start every configured server, print each with its status and tools, stop them.
    Exit 1 when a server failed to start, else 0; 2 for a `.mcp.json` caretz cannot read."""
    from caretz.config_base import ConfigError
    from caretz.runtime.mcp import configured_servers, start_servers
    from caretz.ui.mcp_lines import server_lines

    if output not in ("text", "json"):
        return fail(f"--output {output!r}: use text or json")
    workspace = workspace or Path.cwd()
    try:
        configured = configured_servers(settings, workspace)
    except ConfigError as error:
        return fail(str(error))
    servers = start_servers(settings, configured, workspace, os.environ)
    statuses = servers.statuses() if servers is not None else []
    if servers is not None:
        servers.close()
    if output == "json":
        data = {"servers": [status.as_dict() for status in statuses]}
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        sys.stdout.write("".join(line + "\n" for line in server_lines(statuses)))
    return 1 if any(status.state == "failed" for status in statuses) else 0


def approve_servers(settings: Settings, names: list[str], workspace: Path | None = None) -> int:
    """Approve the project's `.mcp.json` servers named (all for none), so they start."""
    from caretz.config_base import ConfigError
    from caretz.mcp_client.plan import entry_shown
    from caretz.runtime.mcp import approve_project_servers

    try:
        approved = approve_project_servers(settings, workspace or Path.cwd(), names)
    except ConfigError as error:
        return fail(str(error))
    for server in approved:
        sys.stdout.write(
            f"approved {server.name}: `{entry_shown(server.entry)}` starts with each session "
            "here, outside the sandbox (until its entry changes)\n"
        )
    return 0


def mcp_slash(repl: SessionControl, argument: str) -> None:
    """`/mcp`: the session's servers, their status and tools; `/mcp approve [NAME…]`
    approves servers of the project's `.mcp.json` and starts them now."""
    from caretz.ui.mcp_lines import server_lines

    words = argument.split()
    if words and words[0] == "approve":
        approve_in_session(repl, words[1:])
        return
    if words:
        repl.error("/mcp lists the MCP servers; /mcp approve [NAME…] starts a project's")
        return
    mcp = repl.session.mcp
    for line in server_lines(mcp.statuses() if mcp is not None else []):
        style = "dim" if line.startswith("  ") else "bold"
        repl.console.print(f"[{style}]{escape(line)}[/]", highlight=False)


def approve_in_session(repl: SessionControl, names: list[str]) -> None:
    from caretz.config_base import ConfigError
    from caretz.runtime.mcp import approve_and_start

    try:
        with repl.console.status("starting MCP servers…", spinner="dots"):
            statuses = approve_and_start(repl.session, names)
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
