"""`caretz mcp list` and `caretz mcp approve`: the configured MCP servers, from the profile
and the project's `.mcp.json`."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from caretz.commands.loading import with_settings
from caretz.config_base import ConfigError
from caretz.mcp_client.plan import entry_shown
from caretz.runtime.mcp import configured_servers, start_servers
from caretz.runtime.project_keys import protected_names
from caretz.runtime.project_trust import approve_servers as approve_project_servers
from caretz.runtime.project_trust import project_trust
from caretz.ui.mcp_lines import server_lines
from caretz.ui.trust_text import server_lines as entry_lines
from caretz.usage_error import fail

if TYPE_CHECKING:
    from caretz.config.overrides import Flags
    from caretz.config.settings import Settings


def list_mcp_servers(flags: Flags, output: str) -> int:
    return with_settings(flags, lambda settings: list_servers(settings, output))


def approve_mcp_servers(flags: Flags, names: list[str]) -> int:
    return with_settings(flags, lambda settings: approve_servers(settings, names))


def list_servers(settings: Settings, output: str, workspace: Path | None = None) -> int:
    """Start every configured server, print each with its status and tools, stop them.
    Exit 1 when a server failed to start, else 0; 2 for a `.mcp.json` caretz cannot read."""
    if output not in ("text", "json"):
        return fail(f"--output {output!r}: use text or json")
    workspace = workspace or Path.cwd()
    try:
        trust = project_trust(settings, workspace)
    except ConfigError as error:
        return fail(str(error))
    configured = configured_servers(settings, trust)
    servers = start_servers(settings, configured, workspace, trust, os.environ)
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
    """Approve the project's `.mcp.json` servers named (all for none), so they start;
    each is shown as `caretz trust` shows it: what it runs or connects to, the variables
    it expands (caretz's keys to nothing) and where its headers go."""
    try:
        approved = approve_project_servers(settings, workspace or Path.cwd(), names)
    except ConfigError as error:
        return fail(str(error))
    protected = protected_names(settings, os.environ)
    for server in approved:
        sys.stdout.write(
            f"approved {server.name}: `{entry_shown(server.entry)}` starts with each session "
            "here, outside the sandbox (until its entry changes)\n"
        )
        for line in entry_lines(server, protected, os.environ)[1:]:
            sys.stdout.write(line + "\n")
    return 0
