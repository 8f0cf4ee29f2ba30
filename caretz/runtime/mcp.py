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

from caretz.config_base import ConfigError
from caretz.lazy import lazy_module
from caretz.permissions.project import find_project_root

if TYPE_CHECKING:
    from caretz.config.settings import Settings
    from caretz.mcp_client.plan import Configured
    from caretz.mcp_client.servers import Emit, McpServers

# What reads, plans and starts servers (pydantic's schema, the MCP client): only with a
# server configured.
mcp_server_config = lazy_module("caretz.config.mcp_servers")
mcp_plan = lazy_module("caretz.mcp_client.plan")
mcp_approvals = lazy_module("caretz.mcp_client.approvals")
mcp_client_servers = lazy_module("caretz.mcp_client.servers")

LOG_DIR = "mcp-logs"  # under the data dir: each stdio server's stderr, from its last start


def configured_servers(settings: Settings, workspace: Path) -> list[Configured]:
    """The profile's servers, then the project's `.mcp.json` ones the profile does not
    name (and those, for `caretz mcp list`, come back from `start_servers` as such)."""
    root = find_project_root(workspace)
    if not settings.values.mcp_servers and not (root / ".mcp.json").exists():
        return []  # the common case, without loading what reads servers
    servers = mcp_server_config.profile_servers(settings)
    return servers + mcp_server_config.project_servers(root, workspace)


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
    env = os.environ if env is None else env
    profile = [server for server in configured if not server.project]
    project = [server for server in configured if server.project]
    root = find_project_root(workspace)
    approvals = mcp_approvals.Approvals(settings.data_dir)
    specs, not_started = mcp_plan.plan_servers(
        mcp_plan.merged(profile, project),
        settings.profile.mcp,
        approved=lambda server: approvals.approved(root, server.name, server.entry),
        env=env,
        cwd=str(workspace),
    )
    servers = mcp_client_servers.McpServers
    start = servers.start_in_background if background else servers.start
    return start(
        specs,
        not_started + mcp_plan.shadowed(profile, project),
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
    root = find_project_root(workspace)
    written = mcp_server_config.project_servers(root, workspace)
    servers = {server.name: server for server in written}
    unknown = [name for name in names if name not in servers]
    if unknown or not servers:
        have = ", ".join(servers) or "no servers"
        missing = f"no server named {unknown[0]!r}" if unknown else "nothing to approve"
        raise ConfigError(f"{root / mcp_server_config.PROJECT_FILE}: {missing} (it has {have})")
    chosen = [servers[name] for name in names] if names else list(servers.values())
    mcp_approvals.Approvals(settings.data_dir).approve(
        root, {server.name: server.entry for server in chosen}
    )
    return chosen
