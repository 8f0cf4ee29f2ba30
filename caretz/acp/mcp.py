"""The MCP servers an editor passes in `session/new` / `session/load`, as caretz entries.

They join the profile's and the project's servers (a profile's server of the same name
wins). The editor's user configured them, so they start like the profile's, without the
approval a project's `.mcp.json` needs.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from typing import Any, Literal

from acp.schema import HttpMcpServer, McpServerStdio, SseMcpServer
from pydantic import ValidationError

from caretz.config_base import ConfigError
from caretz.mcp_client.config import McpServerEntry
from caretz.mcp_client.plan import Configured

SOURCE = "the editor (session/new)"
log = logging.getLogger(__name__)


def editor_servers(
    servers: Sequence[Any] | None, profile_names: Collection[str] = ()
) -> list[Configured]:
    """The editor's servers but those the profile names too (the profile's entry is
    used). Raises ConfigError naming a server caretz cannot run (an ACP-transport one, or
    an entry its checks refuse)."""
    configured = []
    for server in servers or ():
        if server.name in profile_names:
            log.warning("MCP server %r: the profile's entry is used, not the editor's", server.name)
            continue
        try:
            configured.append(Configured(server.name, entry(server), SOURCE))
        except ValidationError as error:
            problem = error.errors()[0]["msg"]
            raise ConfigError(f"MCP server {server.name!r} from the editor: {problem}") from None
    return configured


def entry(server: Any) -> McpServerEntry:
    if isinstance(server, McpServerStdio):
        env = {item.name: item.value for item in server.env}
        return McpServerEntry(type="stdio", command=server.command, args=server.args, env=env)
    if isinstance(server, (HttpMcpServer, SseMcpServer)):
        headers = {item.name: item.value for item in server.headers}
        kind: Literal["sse", "http"] = "sse" if isinstance(server, SseMcpServer) else "http"
        return McpServerEntry(type=kind, url=server.url, headers=headers)
    name = getattr(server, "name", "?")
    raise ConfigError(f"MCP server {name!r} from the editor: caretz runs stdio, http and sse ones")
