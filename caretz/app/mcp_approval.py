"""`/mcp approve` and `/mcp login` on a live session: the project's `.mcp.json` servers
approved, or an HTTP server logged in to (mcp_client/login.py), and those waiting for it
started, their tools joining the session's registry."""

from __future__ import annotations

import asyncio
import os
import webbrowser
from collections.abc import Callable
from typing import TYPE_CHECKING

from caretz.mcp_client import login as mcp_login  # the SDK: this module starts servers
from caretz.mcp_client.plan import plan_servers
from caretz.mcp_client.servers import McpServers
from caretz.mcp_client.tokens import TOKENS_DIR, TokenStore
from caretz.runtime.mcp import LOG_DIR, http_server_spec
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
    mcp = _servers(session)
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


def login_and_start(
    session: AppSession,
    name: str,
    say: Callable[[str], None],
    open_browser: Callable[[str], object] = webbrowser.open,
) -> ServerStatus:
    """`/mcp login NAME`: log in to the HTTP server `name` in the browser, then start it
    (again) unless it runs; its tools join the session now. Raises ConfigError for a server
    that is not there or not an HTTP one, LoginFailed saying why the login failed."""
    settings = session.settings
    spec = http_server_spec(settings, name, session.workspace, started=True)
    tokens = TokenStore(settings.data_dir / TOKENS_DIR)
    try:
        asyncio.run(mcp_login.login(spec, tokens, open_browser, say))
    except Exception as error:  # the SDK's flow raises groups, its own errors, OSError
        raise mcp_login.LoginFailed(mcp_login.failure(error)) from None
    mcp = _servers(session)
    if not any(s.name == name and s.state == "ready" for s in mcp.statuses()):
        for tool in mcp.launch([spec]):
            session.agent.parts.tools.add(tool)
        mcp.report([name])
    return next(status for status in mcp.statuses() if status.name == name)


def _servers(session: AppSession) -> McpServers:
    """The session's servers, made when it started with none."""
    if session.mcp is None:
        settings = session.settings
        session.mcp = McpServers(
            settings.profile.mcp,
            settings.data_dir / LOG_DIR,
            session.log.emit,
            TokenStore(settings.data_dir / TOKENS_DIR),
        )
    return session.mcp
