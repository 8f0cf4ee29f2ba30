"""Wiring MCP servers into a session: settings and the project in, running servers out.

`configured_servers` reads what is configured (a bad `.mcp.json` is a ConfigError, before
anything starts); `start_servers` starts them, in parallel. A session without a server
to start never imports the SDK: nothing here or in what it calls imports it unless
there is a server to start (mcp_client/manager.py imports the connection then).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from caretz.config.settings import Settings
    from caretz.mcp_client.plan import Configured
    from caretz.mcp_client.servers import Emit, McpServers

LOG_DIR = "mcp-logs"  # under the data dir: each stdio server's stderr, from its last start


def configured_servers(settings: Settings, workspace: Path) -> list[Configured]:
    """The profile's servers, then the project's `.mcp.json` ones the profile does not
    name (and those, for `caretz mcp list`, come back from `start_servers` as such)."""
    from caretz.permissions.project import find_project_root

    root = find_project_root(workspace)
    if not settings.values.mcp_servers and not (root / ".mcp.json").exists():
        return []  # the common case, without loading what reads servers
    from caretz.config.mcp_servers import profile_servers, project_servers

    return profile_servers(settings) + project_servers(root, workspace)


def start_servers(
    settings: Settings,
    configured: list[Configured],
    workspace: Path,
    env: Mapping[str, str] | None = None,
    emit: Emit | None = None,
    background: bool = False,
) -> McpServers | None:
    """The session's servers, started (None when none is configured); `emit`: into the
    session's log. `background`: return at once, the servers starting behind it (the
    interactive prompt's); else each is ready or has failed on return."""
    if not configured:
        return None
    from caretz.mcp_client.approvals import Approvals
    from caretz.mcp_client.plan import merged, plan_servers, shadowed
    from caretz.mcp_client.servers import McpServers
    from caretz.permissions.project import find_project_root

    env = os.environ if env is None else env
    profile = [server for server in configured if not server.project]
    project = [server for server in configured if server.project]
    root = find_project_root(workspace)
    approvals = Approvals(settings.data_dir)
    specs, not_started = plan_servers(
        merged(profile, project),
        settings.profile.mcp,
        approved=lambda server: approvals.approved(root, server.name, server.entry),
        env=env,
        cwd=str(workspace),
    )
    start = McpServers.start_in_background if background else McpServers.start
    return start(
        specs,
        not_started + shadowed(profile, project),
        settings.profile.mcp,
        log_dir=settings.data_dir / LOG_DIR,
        order=[server.name for server in configured],
        **({"emit": emit} if emit is not None else {}),
    )


def approve_project_servers(
    settings: Settings, workspace: Path, names: list[str]
) -> list[Configured]:
    """Approve the project's servers named (all of them for none); returns those approved.
    Raises ConfigError for a name the project's `.mcp.json` does not have."""
    from caretz.config.mcp_servers import PROJECT_FILE, project_servers
    from caretz.config_base import ConfigError
    from caretz.mcp_client.approvals import Approvals
    from caretz.permissions.project import find_project_root

    root = find_project_root(workspace)
    servers = {server.name: server for server in project_servers(root, workspace)}
    unknown = [name for name in names if name not in servers]
    if unknown or not servers:
        have = ", ".join(servers) or "no servers"
        missing = f"no server named {unknown[0]!r}" if unknown else "nothing to approve"
        raise ConfigError(f"{root / PROJECT_FILE}: {missing} (it has {have})")
    chosen = [servers[name] for name in names] if names else list(servers.values())
    Approvals(settings.data_dir).approve(root, {server.name: server.entry for server in chosen})
    return chosen
