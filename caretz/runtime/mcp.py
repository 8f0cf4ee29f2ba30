"""Wiring MCP servers into a session: settings and the project in, running servers out.

`configured_servers` is what is configured (the project's `.mcp.json` as its gate,
runtime/project_trust.py, read it: a bad one is a ConfigError before anything starts);
`start_servers` starts them, in parallel, a project's only once approved. A session without a server
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
from caretz.runtime import project_keys
from caretz.runtime.project_trust import project_trust

if TYPE_CHECKING:
    from caretz.config.settings import Settings
    from caretz.mcp_client.model import ServerSpec, ServerStatus
    from caretz.mcp_client.plan import Configured
    from caretz.mcp_client.servers import Emit, McpServers
    from caretz.runtime.project_trust import ProjectTrust

if TYPE_CHECKING:
    from caretz.config import mcp_servers as mcp_server_config
    from caretz.mcp_client import plan as mcp_plan
    from caretz.mcp_client import servers as mcp_client_servers
else:
    # What reads, plans and starts servers (pydantic's schema, the MCP client): only with a
    # server configured.
    mcp_server_config = lazy_module("caretz.config.mcp_servers")
    mcp_plan = lazy_module("caretz.mcp_client.plan")
    mcp_client_servers = lazy_module("caretz.mcp_client.servers")

LOG_DIR = "mcp-logs"  # under the data dir: each stdio server's stderr, from its last start


def configured_servers(settings: Settings, trust: ProjectTrust) -> list[Configured]:
    """The profile's servers, then the project's `.mcp.json` ones (read by the project's
    gate) the profile does not name (and those, for `caretz mcp list`, come back from
    `start_servers` as such)."""
    if not settings.values.mcp_servers and not trust.config.servers:
        return []  # the common case, without loading what reads servers
    return mcp_server_config.profile_servers(settings) + list(trust.config.servers)


def start_servers(
    settings: Settings,
    configured: list[Configured],
    workspace: Path,
    trust: ProjectTrust,
    env: Mapping[str, str] | None = None,
    emit: Emit | None = None,
    background: bool = False,
) -> McpServers | None:
    """The session's servers, started (None when none is configured): a project's only as
    its `trust` says, its `${VAR}`s expanded without caretz's keys; `emit`: into the
    session's log. `background`: return at once, the servers starting behind it (the
    interactive prompt's); else each is ready or has failed on return."""
    if not configured:
        return None
    # Here, not at the top: `-p` loads this module before its first request, and only a
    # session with a server configured reads the logins kept.
    from caretz.mcp_client.tokens import TOKENS_DIR, TokenStore

    specs, not_started = planned_servers(settings, configured, workspace, trust, env)
    servers = mcp_client_servers.McpServers
    start = servers.start_in_background if background else servers.start
    profile = [server for server in configured if not server.project]
    project = [server for server in configured if server.project]
    return start(
        specs,
        not_started + mcp_plan.shadowed(profile, project),
        settings.profile.mcp,
        log_dir=settings.data_dir / LOG_DIR,
        order=[server.name for server in configured],
        tokens=TokenStore(settings.data_dir / TOKENS_DIR),
        **({"emit": emit} if emit is not None else {}),
    )


def planned_servers(
    settings: Settings,
    configured: list[Configured],
    workspace: Path,
    trust: ProjectTrust,
    env: Mapping[str, str] | None = None,
) -> tuple[list[ServerSpec], list[ServerStatus]]:
    """The servers to start (a project's only as its `trust` says, its `${VAR}`s
    expanded without caretz's keys) and the statuses of those that will not."""
    env = os.environ if env is None else env
    profile = [server for server in configured if not server.project]
    project = [server for server in configured if server.project]
    return mcp_plan.plan_servers(
        mcp_plan.merged(profile, project),
        settings.profile.mcp,
        approved=lambda server: trust.server_approved(server.name),
        env=env,
        project_env=project_keys.project_env(settings, env),
        cwd=str(workspace),
    )


def http_server_spec(settings: Settings, name: str, workspace: Path, started: bool) -> ServerSpec:
    """The HTTP server `name` as a session would connect to it (its login's target);
    `started`: only one a session would start (a project's once approved). Raises
    ConfigError saying why there is none."""
    trust = project_trust(settings, workspace)
    configured = [server for server in configured_servers(settings, trust) if server.name == name]
    if not configured:
        raise ConfigError(f"no MCP server named {name!r} is configured here (/mcp lists them)")
    if configured[0].entry.transport == "stdio":
        raise ConfigError(f"MCP server {name!r} is a stdio server caretz starts: it needs no login")
    if not started:
        server = configured[0]
        env = project_keys.project_env(settings, os.environ) if server.project else os.environ
        try:
            return mcp_plan.spec_for(server, env, str(workspace))
        except ValueError as error:  # a ${VAR} that is not set
            raise ConfigError(str(error)) from None
    specs, not_started = planned_servers(settings, configured, workspace, trust)
    if not specs:
        raise ConfigError(f"MCP server {name!r} is not started here: {not_started[0].detail}")
    return specs[0]
