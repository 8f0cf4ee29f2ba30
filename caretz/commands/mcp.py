"""`caretz mcp list`, `approve`, `login` and `logout`: the configured MCP servers, from the
profile and the project's `.mcp.json`."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import webbrowser
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from caretz.commands.loading import with_settings
from caretz.config_base import ConfigError
from caretz.lazy import lazy_module
from caretz.mcp_client.plan import entry_shown
from caretz.mcp_client.tokens import TOKENS_DIR, TokenStore
from caretz.runtime.mcp import configured_servers, http_server_spec, start_servers
from caretz.runtime.project_keys import protected_names
from caretz.runtime.project_trust import approve_servers as approve_project_servers
from caretz.runtime.project_trust import project_trust
from caretz.ui.mcp_lines import server_lines
from caretz.ui.trust_text import server_lines as entry_lines
from caretz.usage_error import fail, fail_runtime

if TYPE_CHECKING:
    from caretz.config.overrides import Flags
    from caretz.config.settings import Settings
    from caretz.mcp_client import login as mcp_login
else:
    # The login loads the MCP SDK, which the other commands here load only when they
    # start a server.
    mcp_login = lazy_module("caretz.mcp_client.login")


def list_mcp_servers(flags: Flags, output: str) -> int:
    return with_settings(flags, lambda settings: list_servers(settings, output))


def approve_mcp_servers(flags: Flags, names: list[str]) -> int:
    return with_settings(flags, lambda settings: approve_servers(settings, names))


def login_mcp_server(overrides: Flags, name: str) -> int:
    return with_settings(overrides, lambda settings: login_server(settings, name))


def logout_mcp_server(overrides: Flags, name: str) -> int:
    return with_settings(overrides, lambda settings: logout_server(settings, name))


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


def login_server(
    settings: Settings,
    name: str,
    workspace: Path | None = None,
    open_browser: Callable[[str], object] = webbrowser.open,
) -> int:
    """Log in to the HTTP server `name` in the browser (`open_browser`) and keep its
    tokens; 0 when logged in (or it asks for no login), 1 when the login failed, 2 for a
    server that is not there or not an HTTP one."""
    try:
        spec = http_server_spec(settings, name, workspace or Path.cwd(), started=True)
    except ConfigError as error:
        return fail(str(error))
    tokens = TokenStore(settings.data_dir / TOKENS_DIR)

    def say(url: str) -> None:
        sys.stderr.write(
            f"Log in to MCP server {name!r} in your browser; if none opens, visit:\n  {url}\n"
        )
        sys.stderr.flush()

    try:
        logged_in = asyncio.run(mcp_login.login(spec, tokens, open_browser, say))
    except Exception as error:  # the SDK's flow raises groups, its own errors, OSError
        return fail_runtime(f"cannot log in to MCP server {name!r}: {mcp_login.failure(error)}")
    if not logged_in:
        sys.stdout.write(f"MCP server {name!r} asked for no login: it works without one\n")
        return 0
    sys.stdout.write(
        f"logged in to MCP server {name!r}: its tokens are kept in {tokens.path(spec.url)} "
        f"(caretz mcp logout {name} removes them)\n"
    )
    return 0


def logout_server(settings: Settings, name: str, workspace: Path | None = None) -> int:
    """Remove the login kept for the HTTP server `name`: its tokens and registration."""
    try:
        spec = http_server_spec(settings, name, workspace or Path.cwd(), started=False)
    except ConfigError as error:
        return fail(str(error))
    if TokenStore(settings.data_dir / TOKENS_DIR).forget(spec.url):
        sys.stdout.write(f"logged out of MCP server {name!r}: its tokens are removed\n")
    else:
        sys.stdout.write(f"no login is kept for MCP server {name!r}\n")
    return 0
