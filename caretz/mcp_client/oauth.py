"""OAuth 2.1 for HTTP MCP servers, through the SDK's client side (`OAuthClientProvider`,
an httpx2.Auth): what every HTTP connection authenticates with (`session_auth`) and what
`caretz mcp login` runs the browser's flow with (mcp_client/login.py).

- A server with no login kept gets `LoginCheck`: its 401 is `LoginNeeded`, one line, and
  the session goes on without it; nothing is registered or opened behind the user's back.
- A server with one kept gets the SDK's provider over the kept tokens (`StoredLogin`,
  mcp_client/tokens.py): the SDK refreshes an expired access token itself; where a new
  login is needed (the refresh token is no good any more) it asks for a browser, and
  here that is `LoginNeeded` again.
- An entry with an `Authorization` header of its own handles its own authentication:
  no OAuth for it.

The SDK keeps an access token's expiry only in memory, so a token read back from storage
would count as valid forever: sent, refused, and then a new login asked for instead of a
refresh. `OAuthProvider` reads the expiry back with the tokens (and the authorization server's
metadata, which names the token endpoint), so a later session refreshes.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from typing import Any

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
)
from pydantic import ValidationError

from caretz.mcp_client.model import OAuthOptions, ServerSpec
from caretz.mcp_client.tokens import TokenStore

# The redirect URI a session's provider names when none was registered: a session never
# opens a browser, so it is never used.
UNUSED_REDIRECT = "http://127.0.0.1/callback"


class LoginNeeded(Exception):
    """The server asks for an OAuth login that caretz does not have (or no longer has)."""

    def __init__(self, server: str, again: bool = False):
        self.server = server
        need = "a new login" if again else "a login"
        super().__init__(f"it needs {need}: run `caretz mcp login {server}`")


def session_auth(spec: ServerSpec, tokens: TokenStore | None) -> httpx2.Auth | None:
    """How a session's connection to the HTTP server `spec` authenticates."""
    if any(name.lower() == "authorization" for name in spec.headers):
        return None
    if tokens is None or not tokens.has_tokens(spec.url):
        return LoginCheck(spec.name)
    stored = StoredLogin(tokens, spec.url, spec.oauth)
    redirect = stored.kept_redirect() or UNUSED_REDIRECT

    async def no_browser(url: str) -> None:
        raise LoginNeeded(spec.name, again=True)

    async def no_callback() -> AuthorizationCodeResult:  # never reached: no_browser raises
        raise LoginNeeded(spec.name, again=True)

    return OAuthProvider(stored, spec.url, redirect, no_browser, no_callback)


class LoginCheck(httpx2.Auth):
    """A server's requests as they are; its 401 (it wants a login) is LoginNeeded."""

    def __init__(self, server: str):
        self.server = server

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        response = yield request
        if response.status_code == 401:
            raise LoginNeeded(self.server)


class OAuthProvider(OAuthClientProvider):
    """The SDK's provider over a kept login: it also reads back when the access token
    expires and where to refresh it (the module's docstring says why)."""

    def __init__(
        self,
        stored: StoredLogin,
        url: str,
        redirect_uri: str,
        redirect_handler: Callable[[str], Awaitable[None]],
        callback_handler: Callable[[], Awaitable[AuthorizationCodeResult]],
    ):
        super().__init__(
            url,
            client_metadata(stored.options, redirect_uri),
            stored,
            redirect_handler=redirect_handler,
            callback_handler=callback_handler,
        )
        self.stored = stored

    async def _initialize(self) -> None:
        await super()._initialize()
        self.context.token_expiry_time = self.stored.expiry()
        if self.context.oauth_metadata is None:
            self.context.oauth_metadata = self.stored.metadata()


class PinnedScopes(OAuthClientMetadata):
    """Client metadata whose scopes are the entry's `oauth.scopes`: the SDK replaces the
    scopes with those the server names before it registers and asks for authorization,
    and a user who wrote scopes asks for those."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name != "scope":
            super().__setattr__(name, value)


def client_metadata(options: OAuthOptions, redirect_uri: str) -> OAuthClientMetadata:
    """What caretz registers as (RFC 7591), and asks authorization with."""
    kind = PinnedScopes if options.scopes else OAuthClientMetadata
    return kind(
        client_name="caretz",
        redirect_uris=[redirect_uri],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="client_secret_post" if options.client_secret else "none",
        scope=" ".join(options.scopes) or None,
    )


class StoredLogin:
    """The SDK's TokenStorage for one server URL, over caretz's TokenStore. `fresh` (a
    login under way): no kept tokens are used, and a kept registration only when it names
    `redirect_uri`, where the browser comes back now. A client configured by hand
    (`oauth.clientId`) is never registered nor kept."""

    def __init__(
        self,
        tokens: TokenStore,
        url: str,
        options: OAuthOptions,
        redirect_uri: str | None = None,
        fresh: bool = False,
    ):
        self.tokens = tokens
        self.url = url
        self.options = options
        self.redirect_uri = redirect_uri
        self.fresh = fresh
        self.got_tokens = False  # new tokens came while this ran

    def _kept(self, part: str) -> Mapping[str, Any]:
        value = self.tokens.load(self.url).get(part)
        return value if isinstance(value, dict) else {}

    async def get_tokens(self) -> OAuthToken | None:
        kept = self._kept("tokens")
        if self.fresh or not kept:
            return None
        try:
            return OAuthToken.model_validate(kept)
        except ValidationError:
            return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        expires_at = None if tokens.expires_in is None else self.tokens.clock() + tokens.expires_in
        data = tokens.model_dump(mode="json", exclude_none=True)
        self.tokens.update(self.url, tokens=data, expiresAt=expires_at)
        self.got_tokens = True

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        options = self.options
        if options.client_id is not None:
            return OAuthClientInformationFull(
                client_id=options.client_id,
                client_secret=options.client_secret,
                redirect_uris=[self.redirect_uri or UNUSED_REDIRECT],  # type: ignore[list-item]
                token_endpoint_auth_method="client_secret_post"
                if options.client_secret
                else "none",
            )
        try:
            client = OAuthClientInformationFull.model_validate(self._kept("client"))
        except ValidationError:
            return None
        if self.fresh and self.redirect_uri not in [str(uri) for uri in client.redirect_uris or []]:
            return None  # registered for another port: register again
        return client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        if self.options.client_id is None:
            self.tokens.update(
                self.url, client=client_info.model_dump(mode="json", exclude_none=True)
            )

    def kept_redirect(self) -> str | None:
        """The redirect URI of the kept registration, if there is one."""
        uris = self._kept("client").get("redirect_uris")
        return uris[0] if isinstance(uris, list) and uris and isinstance(uris[0], str) else None

    def expiry(self) -> float | None:
        """When the kept access token expires, on the SDK's clock (time.time)."""
        expires_at = self.tokens.load(self.url).get("expiresAt")
        if not isinstance(expires_at, int | float) or isinstance(expires_at, bool):
            return None
        return time.time() + (expires_at - self.tokens.clock())

    def metadata(self) -> OAuthMetadata | None:
        try:
            return (
                OAuthMetadata.model_validate(self._kept("metadata"))
                if self._kept("metadata")
                else None
            )
        except ValidationError:
            return None

    def keep_metadata(self, metadata: OAuthMetadata | None) -> None:
        if metadata is not None:
            self.tokens.update(
                self.url, metadata=metadata.model_dump(mode="json", exclude_none=True)
            )
