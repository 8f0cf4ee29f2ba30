"""A profile's `mcpServers` and `mcp` sections, and a server entry (also `.mcp.json`'s).

An entry is written as Claude Code and Cursor write `.mcp.json`: `command`, `args`, `env`
for a server caretz starts (stdio), or `url` and `headers` for one it connects to
(`type: "http"`, streamable HTTP; `type: "sse"`, the older transport). Strings may hold
`${VAR}` and `${VAR:-default}`, expanded when the server starts (mcp_client/expand.py).
An HTTP server that asks for OAuth gets it with no key at all (`caretz mcp login NAME`);
its `oauth` key sets a registered client, the scopes and the callback port, as Claude
Code's and Codex CLI's entries do.
"""

from __future__ import annotations

from typing import Annotated, Literal, TypeVar

from pydantic import AfterValidator, Field, model_validator

from caretz.config_base import parse_duration
from caretz.config_section import PositiveDuration, Section

Transport = Literal["stdio", "http", "sse"]
ProjectServers = Literal["approved", "all", "none"]
DEFAULT_MAX_RESULT_CHARS = 100_000
DEFAULT_STARTUP_TIMEOUT = "60s"


class McpOAuth(Section):
    """An HTTP server's `oauth` key: what its authorization server needs of caretz. Left
    out, caretz registers itself (dynamic client registration) and asks for the scopes
    the server names."""

    client_id: Annotated[str, Field(min_length=1)] | None = None  # a client registered by hand
    client_secret: Annotated[str, Field(min_length=1)] | None = None  # that client's secret
    scopes: list[Annotated[str, Field(min_length=1)]] | None = None
    # The loopback port the browser comes back to (http://127.0.0.1:PORT/callback), for a
    # client registered with a fixed redirect URI; left out: a free one.
    callback_port: Annotated[int, Field(ge=1, le=65535)] | None = None

    @model_validator(mode="after")
    def _secret_has_client(self) -> McpOAuth:
        if self.client_secret is not None and self.client_id is None:
            raise ValueError("a clientSecret belongs to a clientId: write both")
        return self


class McpServerEntry(Section):
    """One server under `mcpServers`."""

    type: Transport | None = None  # None: http for a `url` alone, else stdio
    command: Annotated[str, Field(min_length=1)] | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    url: Annotated[str, Field(min_length=1)] | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    disabled: bool = False
    # This server's own time to be ready, over `mcp.startupTimeout` (Codex CLI's
    # startup_timeout_sec): a known slow starter gets more, a flaky one less.
    startup_timeout: PositiveDuration | None = None
    oauth: McpOAuth | None = None  # an HTTP server's OAuth options (docs/mcp.md)

    @property
    def transport(self) -> Transport:
        if self.type is not None:
            return self.type
        return "http" if self.url is not None and self.command is None else "stdio"

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerEntry:
        if self.transport == "stdio":
            if self.command is None:
                raise ValueError("a stdio server needs a command (or write url for an HTTP one)")
            if self.url is not None or self.headers or self.oauth is not None:
                raise ValueError("url, headers and oauth belong to an HTTP server, not a stdio one")
            return self
        if self.url is None:
            raise ValueError(f"an {self.transport} server needs a url")
        if self.command is not None or self.args or self.env:
            raise ValueError("command, args and env belong to a stdio server, not an HTTP one")
        return self


Entry = TypeVar("Entry", bound=McpServerEntry)


def named(servers: dict[str, Entry]) -> dict[str, Entry]:
    """A server table's check: every server has a name."""
    for name in servers:
        if not name.strip():
            raise ValueError("a server needs a name: an empty key names none")
    return servers


ServerTable = Annotated[dict[str, McpServerEntry], AfterValidator(named)]


class McpConfig(Section):
    """A profile's `mcp` section."""

    enabled: bool = True  # False: no server starts, whatever is configured
    # Each server's time to start and list its tools. Servers from PyPI or npm took 26-29 s
    # on a busy machine, past Codex CLI's 10 s and near Claude Code's 30 s (MCP_TIMEOUT);
    # no run waits for a server it does not use, so a generous limit costs nothing.
    startup_timeout: PositiveDuration = DEFAULT_STARTUP_TIMEOUT
    call_timeout: PositiveDuration = "2m"
    max_result_chars: int = Field(DEFAULT_MAX_RESULT_CHARS, ge=1000)
    # Which servers of a project's .mcp.json start: those you approved (`caretz mcp
    # approve`), all of them, or none.
    project_servers: ProjectServers = "approved"

    @property
    def startup_timeout_s(self) -> float:
        return parse_duration(self.startup_timeout)

    @property
    def call_timeout_s(self) -> float:
        return parse_duration(self.call_timeout)
