"""Which configured servers start, and what each one is once its strings are expanded.

Servers come from the profile's `mcpServers` and from the project's `.mcp.json`; where
both name one server, the profile's entry is used (a repository cannot replace a server
the user set up, and its allow rules with it). A server that is not started on purpose
(switched off, not approved) or that cannot be (a `${VAR}` that is not set, a name that
meets another server's) gets a status saying so instead of a spec.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from caretz.config_base import parse_duration
from caretz.mcp_client.config import McpConfig, McpOAuth, McpServerEntry
from caretz.mcp_client.expand import MissingVariable, expand, expand_all
from caretz.mcp_client.launch import server_environment
from caretz.mcp_client.model import (
    OAuthOptions,
    ServerSpec,
    ServerStatus,
    State,
    shown_command,
)
from caretz.mcp_client.names import server_part


@dataclass(frozen=True)
class Configured:
    """A server entry and where it is written."""

    name: str
    entry: McpServerEntry
    source: str  # "profiles.json", or the project's .mcp.json path as shown
    project: bool = False  # from the project's .mcp.json (needs approval by default)


def merged(profile: list[Configured], project: list[Configured]) -> list[Configured]:
    """The profile's servers, then the project's that the profile does not name."""
    names = {server.name for server in profile}
    return profile + [server for server in project if server.name not in names]


def shadowed(profile: list[Configured], project: list[Configured]) -> list[ServerStatus]:
    """The project's entries a profile entry of the same name replaces."""
    names = {server.name for server in profile}
    return [
        _status(server, "disabled", "the profile defines a server of this name, which is used")
        for server in project
        if server.name in names
    ]


def plan_servers(
    servers: list[Configured],
    config: McpConfig,
    *,
    approved: Callable[[Configured], bool],
    env: Mapping[str, str],
    project_env: Mapping[str, str],
    cwd: str,
    running: list[str] | None = None,
) -> tuple[list[ServerSpec], list[ServerStatus]]:
    """The servers to start, and the statuses of those that will not start. A project's
    server expands its `${VAR}`s in `project_env` (without caretz's keys), the profile's
    in `env`. `running` names servers already running, whose tool names are taken."""
    specs: list[ServerSpec] = []
    statuses: list[ServerStatus] = []
    parts = {server_part(name): name for name in running or []}
    for server in servers:
        reason = _not_started(server, config, approved)
        if reason is not None:
            statuses.append(_status(server, *reason))
            continue
        part = server_part(server.name)
        if part in parts:
            detail = (
                f"its tools would be named like those of server {parts[part]!r} (mcp__{part}__…)"
            )
            statuses.append(_status(server, "failed", detail + "; rename one"))
            continue
        try:
            specs.append(spec_for(server, project_env if server.project else env, cwd))
        except MissingVariable as missing:
            statuses.append(_status(server, "failed", str(missing)))
            continue
        parts[part] = server.name
    return specs, statuses


def _not_started(
    server: Configured, config: McpConfig, approved: Callable[[Configured], bool]
) -> tuple[State, str] | None:
    if not config.enabled:
        return "off", "mcp.enabled is false"
    if server.entry.disabled:
        return "disabled", '"disabled": true in its entry'
    if not server.project or config.project_servers == "all":
        return None
    if config.project_servers == "none":
        return "off", 'mcp.projectServers is "none"'
    if approved(server):
        return None
    return "not approved", f"approve it with: caretz mcp approve {server.name}"


def spec_for(server: Configured, env: Mapping[str, str], cwd: str) -> ServerSpec:
    """The entry with its `${VAR}`s expanded; raises MissingVariable."""
    entry, where = server.entry, f"mcpServers.{server.name}"
    if entry.transport != "stdio":
        assert entry.url is not None  # the entry's validator makes sure
        return ServerSpec(
            name=server.name,
            source=server.source,
            transport=entry.transport,
            url=expand(entry.url, env, f"{where}.url"),
            headers=header_values(expand_all(entry.headers, env, f"{where}.headers")),
            shown=entry_shown(entry),
            startup_timeout_s=startup_timeout_s(entry),
            oauth=oauth_options(entry.oauth, env, f"{where}.oauth"),
        )
    assert entry.command is not None
    args = tuple(expand(arg, env, f"{where}.args[{index}]") for index, arg in enumerate(entry.args))
    return ServerSpec(
        name=server.name,
        source=server.source,
        transport="stdio",
        command=expand(entry.command, env, f"{where}.command"),
        args=args,
        env=server_environment(env, expand_all(entry.env, env, f"{where}.env")),
        cwd=cwd,
        shown=entry_shown(entry),
        startup_timeout_s=startup_timeout_s(entry),
    )


def oauth_options(oauth: McpOAuth | None, env: Mapping[str, str], where: str) -> OAuthOptions:
    """An entry's `oauth`, its client id and secret expanded (a secret comes from `${VAR}`)."""
    if oauth is None:
        return OAuthOptions()
    client_id, secret = oauth.client_id, oauth.client_secret
    return OAuthOptions(
        client_id=None if client_id is None else expand(client_id, env, f"{where}.clientId"),
        client_secret=None if secret is None else expand(secret, env, f"{where}.clientSecret"),
        scopes=tuple(oauth.scopes or ()),
        callback_port=oauth.callback_port,
    )


def header_values(headers: Mapping[str, str]) -> dict[str, str]:
    """Expanded header values without the white space around them, which HTTP forbids (a
    `Bearer ${KEY}` whose key expands to nothing is `Bearer`)."""
    return {name: value.strip() for name, value in headers.items()}


def startup_timeout_s(entry: McpServerEntry) -> float | None:
    return None if entry.startup_timeout is None else parse_duration(entry.startup_timeout)


def entry_shown(entry: McpServerEntry) -> str:
    """What an entry runs or where it connects, as written."""
    if entry.transport == "stdio":
        return shown_command(entry.command or "", entry.args)
    return entry.url or ""


def _status(server: Configured, state: State, detail: str) -> ServerStatus:
    entry = server.entry
    return ServerStatus(
        name=server.name,
        source=server.source,
        transport=entry.transport,
        shown=entry_shown(entry),
        state=state,
        detail=detail,
    )
