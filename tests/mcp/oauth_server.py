"""A real MCP server behind a real OAuth 2.1 authorization server, on loopback: the SDK's
server-side auth (mcp.server.auth: /.well-known/oauth-protected-resource,
/.well-known/oauth-authorization-server, /register, /authorize, /token) with an
authorization provider written for the tests, in front of a streamable HTTP (or SSE)
MCP server with one tool.

`/authorize` consents at once (a user who clicks "allow"): it redirects to the client's
redirect URI with a fresh code and the client's state. Every token is random; the tests
read what was issued, refreshed and registered from `provider`.
"""

from __future__ import annotations

import asyncio
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

LIFETIME_S = 3600


@dataclass
class Provider:
    """The authorization server's state: what it registered and issued."""

    clients: dict[str, OAuthClientInformationFull] = field(default_factory=dict)
    codes: dict[str, AuthorizationCode] = field(default_factory=dict)
    access: dict[str, AccessToken] = field(default_factory=dict)
    refresh: dict[str, RefreshToken] = field(default_factory=dict)
    authorizations: int = 0
    refreshes: int = 0
    refused_client: str = ""  # a client_id /authorize answers with access_denied

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        assert client.client_id is not None
        if client.client_id == self.refused_client:
            return construct_redirect_uri(
                str(params.redirect_uri), error="access_denied", state=params.state
            )
        self.authorizations += 1
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or ["mcp"],
            expires_at=time.time() + 600,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        del self.codes[authorization_code.code]
        return self._issue(authorization_code.client_id, authorization_code.scopes)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.refreshes += 1
        del self.refresh[refresh_token.token]
        # The client's old access token is no good from now on.
        self.access = {k: v for k, v in self.access.items() if v.client_id != client.client_id}
        return self._issue(refresh_token.client_id, scopes or refresh_token.scopes)

    async def load_access_token(self, token: str) -> AccessToken | None:
        return self.access.get(token)

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def _issue(self, client_id: str, scopes: list[str]) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        expires = int(time.time()) + LIFETIME_S
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=expires
        )
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes)
        return OAuthToken(
            access_token=access,
            refresh_token=refresh,
            expires_in=LIFETIME_S,
            scope=" ".join(scopes),
        )


@dataclass
class AuthServer:
    base: str
    provider: Provider

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    @property
    def sse_url(self) -> str:
        return f"{self.base}/sse"


def _app(provider: Provider, base: str, sse: bool) -> Any:
    resource = f"{base}/sse" if sse else f"{base}/mcp"
    server = MCPServer(
        "guarded",
        auth_server_provider=provider,  # type: ignore[arg-type]
        auth=AuthSettings(
            issuer_url=base,  # type: ignore[arg-type]
            resource_server_url=resource,  # type: ignore[arg-type]
            validate_token_resource=False,
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=["mcp", "extra"], default_scopes=["mcp"]
            ),
            required_scopes=["mcp"],
        ),
    )

    @server.tool()
    def whoami() -> str:
        """Say that the caller got in."""
        return "you are signed in"

    return server.sse_app() if sse else server.streamable_http_app()


def serve(sse: bool = False) -> Iterator[AuthServer]:
    """The server on a free loopback port, in a thread of this process, until the end. Its
    socket listens before this returns, so a client may connect at once: uvicorn accepts
    what waits in the backlog once it runs (no wait for it here)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    provider = Provider()
    config = uvicorn.Config(_app(provider, base, sse), log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    try:
        yield AuthServer(base, provider)
    finally:
        server.should_exit = True
        thread.join(timeout=300)
        sock.close()
