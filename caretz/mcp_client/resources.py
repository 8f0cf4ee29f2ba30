"""A session's MCP resources and prompts: listing a server's resources (once a session),
reading one, getting a prompt, for the read tools (resource_tools.py), `@server:uri`
mentions (app/resource_mentions.py) and `/mcp__server__prompt` commands.

Every request goes to a server through the manager, within `mcp.callTimeout`; one whose
server is still starting waits for it within its `startupTimeout` first. Whatever goes
wrong is a `ResourceProblem`: one line naming the server and what to do.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from caretz import inbound
from caretz.lazy import lazy_module
from caretz.mcp_client.manager import CallCancelled
from caretz.mcp_client.model import RemotePrompt, RemoteResource
from caretz.mcp_client.results import prompt_content, resource_content
from caretz.messages import Image

if TYPE_CHECKING:
    from caretz.mcp_client import connection as mcp_connection
    from caretz.mcp_client import offers
    from caretz.mcp_client.connection import ServerConnection
    from caretz.mcp_client.servers import McpServers
else:
    # The SDK's side: loaded by the time a server is ready to be asked.
    mcp_connection = lazy_module("caretz.mcp_client.connection")
    offers = lazy_module("caretz.mcp_client.offers")  # with it: resources and prompts

T = TypeVar("T")


class ResourceProblem(Exception):
    """A resource or prompt that cannot be had; the message is one line."""


class McpResources:
    def __init__(self, servers: McpServers):
        self.servers = servers
        self._listed: dict[str, list[RemoteResource]] = {}  # by server, once a session
        self._lock = threading.Lock()

    def names(self) -> list[str]:
        """The servers ready now that say they have resources."""
        ready = dict(self.servers.offers)  # a copy: completion asks from its own thread
        return [name for name, offers in ready.items() if offers.resources]

    def listed(
        self, server: str, cancel: threading.Event, what: str = "list_mcp_resources"
    ) -> list[RemoteResource]:
        """The server's resources, listed on first use (for `what`, should the server
        still be starting); raises ResourceProblem."""
        with self._lock:
            if server in self._listed:
                return self._listed[server]
        self._ready(server, cancel, what)
        found = self._ask(
            server, lambda c: c.ask(offers.list_resources), cancel, "list its resources"
        )
        with self._lock:
            self._listed[server] = found
        return found

    def completions(self, cancel: threading.Event) -> list[tuple[str, str]]:
        """(`server:uri`, what it is) of every resource of the servers ready now, each
        server listed on first use; one that cannot list gives none."""
        entries = []
        for server in self.names():
            try:
                listed = self.listed(server, cancel, f"@{server}: completion")
            except ResourceProblem:
                continue
            for resource in listed:
                about = resource.name or resource.description or resource.mime_type
                entries.append((f"{server}:{resource.uri}", f"MCP {about}".strip()))
        return entries

    def read(self, server: str, uri: str, cancel: threading.Event) -> tuple[str, list[Image]]:
        """The resource's text (over `mcp.maxResultChars`: a ResourceProblem) and its
        images; raises ResourceProblem."""
        self._ready(server, cancel, f"@{server}:{uri}")
        contents = self._ask(
            server, lambda c: c.ask(lambda s: offers.read_resource(s, uri)), cancel, f"read {uri}"
        )
        try:
            text, images = resource_content(contents, f"{server}:{uri}")
        except inbound.BadInput as problem:
            raise ResourceProblem(f"MCP server {server!r} sent {uri} as {problem}") from None
        cap = self.servers.config.max_result_chars
        if len(text) > cap:
            raise ResourceProblem(
                f"{server}:{uri} is {len(text):,} characters, more than caretz passes on "
                f"(mcp.maxResultChars: {cap:,})"
            )
        return text, images

    def prompt(
        self, server: str, prompt: RemotePrompt, arguments: dict[str, str], cancel: threading.Event
    ) -> tuple[str, list[Image]]:
        """The prompt's messages as one text, and its images; raises ResourceProblem."""
        name = prompt.name
        messages = self._ask(
            server,
            lambda c: c.ask(lambda s: offers.get_prompt(s, name, arguments)),
            cancel,
            f"get its prompt {name!r}",
        )
        try:
            return prompt_content(messages, f"{server}:{name}")
        except inbound.BadInput as problem:
            raise ResourceProblem(f"MCP server {server!r} sent its prompt as {problem}") from None

    def _ready(self, server: str, cancel: threading.Event, what: str) -> None:
        """Wait for a server still starting; ResourceProblem when it is not there now or
        has no resources."""
        servers = self.servers
        if not servers.knows(server):
            known = ", ".join(sorted(self.names())) or "none has resources"
            raise ResourceProblem(
                f"no MCP server named {server!r} (servers with resources: {known})"
            )
        problem = servers.await_server(server, cancel, what)
        if problem is not None:
            raise ResourceProblem(problem)
        offers = servers.offers.get(server)
        if offers is None:
            raise ResourceProblem(f"MCP server {server!r} is not running")
        if not offers.resources:
            raise ResourceProblem(f"MCP server {server!r} has no resources")

    def _ask(
        self,
        server: str,
        make: Callable[[ServerConnection], Coroutine[Any, Any, T]],
        cancel: threading.Event,
        doing: str,
    ) -> T:
        servers = self.servers
        manager = servers.manager
        down = servers.down_reason(server)
        if manager is None or down is not None:
            raise ResourceProblem(f"MCP server {server!r} is down ({down or 'not running'})")
        timeout = servers.config.call_timeout_s
        try:
            return manager.request(server, make, timeout, cancel)
        except CallCancelled:
            said = "it was cancelled"
        except mcp_connection.CallTimedOut:
            said = f"no answer within {timeout:g} s (mcp.callTimeout)"
        except (mcp_connection.CallRefused, mcp_connection.Unreadable) as problem:
            said = str(problem)
        except mcp_connection.ServerDown as gone:
            servers.went_down(server, gone.reason)
            said = f"it is down ({servers.down_reason(server)})"
        raise ResourceProblem(f"MCP server {server!r} could not {doing}: {said}")
