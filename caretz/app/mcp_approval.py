"""`/mcp approve` on a live session: the project's `.mcp.json` servers approved, those
waiting for it started, their tools joining the session's registry."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from caretz.mcp_client.plan import plan_servers
from caretz.mcp_client.servers import McpServers
from caretz.runtime.mcp import LOG_DIR
from caretz.runtime.project_keys import project_env
from caretz.runtime.project_trust import approve_servers

if TYPE_CHECKING:
    from caretz.app.session import AppSession
    from caretz.mcp_client.model import ServerStatus


def approve_and_start(session: AppSession, names: list[str]) -> list[ServerStatus]:
    """`/mcp approve`: approve the project's servers named (all for none) and start those
    that wait for it; their tools join the session now. Returns their statuses. Raises
    ConfigError for a name the project's `.mcp.json` does not have."""
    settings = session.settings
    approved = approve_servers(settings, session.workspace, names)
    if session.mcp is None:
        session.mcp = McpServers(
            settings.profile.mcp, settings.data_dir / LOG_DIR, session.log.emit
        )
    mcp = session.mcp
    waiting = {status.name for status in mcp.statuses() if status.state == "not approved"}
    chosen = [server for server in approved if server.name in waiting or not mcp.knows(server.name)]
    running = [s.name for s in mcp.statuses() if s.state in ("ready", "down")]
    specs, failed = plan_servers(
        chosen,
        settings.profile.mcp,
        approved=lambda server: True,
        env=os.environ,
        project_env=project_env(settings, os.environ),
        cwd=str(session.workspace),
        running=running,
    )
    mcp.note(failed)
    for tool in mcp.launch(specs):
        session.agent.parts.tools.add(tool)
    started = [server.name for server in chosen]
    mcp.report(started)
    return [status for status in mcp.statuses() if status.name in started]
