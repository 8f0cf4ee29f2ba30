"""The plain data of MCP servers: what to start, and how each one stands."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from caretz.mcp_client.config import Transport

# ready: its tools are in the session; starting: behind the prompt, not ready yet; failed:
# it did not start; down: it stopped during the session; needs login: it asks for an OAuth
# login caretz does not have; not approved / disabled / off: it was not started, on purpose.
State = Literal[
    "ready", "starting", "failed", "down", "needs login", "not approved", "disabled", "off"
]


@dataclass(frozen=True)
class OAuthOptions:
    """An HTTP server's `oauth` key, its strings expanded (docs/mcp.md)."""

    client_id: str | None = None
    client_secret: str | None = None
    scopes: tuple[str, ...] = ()
    callback_port: int | None = None


@dataclass(frozen=True, kw_only=True)
class ServerSpec:
    """A server to start, its strings expanded. `env` is the server's whole environment."""

    name: str
    source: str  # where it is configured, for messages
    transport: Transport
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str = ""
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    # What it runs or where it connects, as written (before `${VAR}` expansion, so a key
    # passed in an argument is not shown or logged); never its env or headers.
    shown: str = ""
    startup_timeout_s: float | None = None  # None: mcp.startupTimeout
    oauth: OAuthOptions = field(default_factory=OAuthOptions)  # an HTTP server's


def shown_command(command: str, args: tuple[str, ...] | list[str]) -> str:
    return shlex.join([command, *args])


@dataclass(frozen=True)
class RemoteTool:
    """A tool as the server lists it."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    read_only: bool = False  # the server's readOnlyHint annotation


@dataclass(frozen=True)
class ToolInfo:
    """One of a server's tools as the session has it."""

    name: str  # mcp__server__tool
    remote: str  # the server's own name for it
    description: str


@dataclass(frozen=True, kw_only=True)
class ServerStatus:
    name: str
    source: str
    transport: Transport
    shown: str
    state: State
    detail: str = ""  # why it failed, went down or was not started
    tools: tuple[ToolInfo, ...] = ()
    duration_s: float = 0.0  # how long the start took

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "source": self.source,
            "transport": self.transport,
            "target": self.shown,
            "status": self.state,
            "detail": self.detail or None,
            "duration_s": round(self.duration_s, 3),
            "tools": [
                {"name": tool.name, "tool": tool.remote, "description": tool.description}
                for tool in self.tools
            ],
        }


@dataclass(frozen=True)
class RemoteResource:
    """A resource as the server lists it (`resources/list`)."""

    uri: str
    name: str
    description: str = ""
    mime_type: str = ""


@dataclass(frozen=True)
class PromptArgument:
    name: str
    description: str = ""
    required: bool = False


@dataclass(frozen=True)
class RemotePrompt:
    """A prompt as the server lists it (`prompts/list`): its arguments in declared order."""

    name: str
    description: str = ""
    arguments: tuple[PromptArgument, ...] = ()


@dataclass(frozen=True)
class Offers:
    """What a server offers besides tools: whether it has resources (listed when asked
    for), and its prompts (listed at its start: they are slash commands)."""

    resources: bool = False
    prompts: tuple[RemotePrompt, ...] = ()
