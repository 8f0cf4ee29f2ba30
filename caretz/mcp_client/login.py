"""`caretz mcp login`'s flow: the browser's OAuth login to an HTTP MCP server, through the
SDK's provider (mcp_client/oauth.py), its tokens kept in caretz's data dir.

caretz connects as a session would, without the login kept: the server's 401 starts the
SDK's flow (its protected-resource and authorization-server metadata, the client's
registration unless `oauth.clientId` names one, PKCE). The browser is sent to the
authorization URL (`open_browser`, webbrowser.open by default; the URL is also given to
`say` for a machine without one) and comes back to a one-shot listener on 127.0.0.1
(mcp_client/loopback.py), whose state must match the request's. A login that does not
finish within LOGIN_WAIT_S ends, saying so; the login kept before, if any, stays.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from urllib.parse import urlsplit

from mcp import ClientSession
from mcp.client.auth import OAuthFlowError, OAuthRegistrationError, OAuthTokenError
from mcp.shared.auth import AuthorizationCodeResult

from caretz.mcp_client.connection import CLIENT_INFO, describe, http_transport
from caretz.mcp_client.loopback import LoginRefused, Loopback
from caretz.mcp_client.model import ServerSpec
from caretz.mcp_client.oauth import OAuthProvider, StoredLogin
from caretz.mcp_client.tokens import TokenStore

LOGIN_WAIT_S = 300.0  # for the user to finish in the browser


class LoginFailed(Exception):
    pass


async def login(
    spec: ServerSpec,
    tokens: TokenStore,
    open_browser: Callable[[str], object],
    say: Callable[[str], None],
    wait_s: float = LOGIN_WAIT_S,
) -> bool:
    """Log in to the HTTP server `spec`, keeping its tokens; False when it asked for no
    login. Raises LoginFailed, LoginRefused, the SDK's OAuth errors, or OSError."""
    for name in ("mcp", "httpx2"):  # the SDK logs the flow's failures: caretz says them once
        logger = logging.getLogger(name)
        if not logger.handlers:
            logger.addHandler(logging.NullHandler())
    loopback = await _listen(spec, StoredLogin(tokens, spec.url, spec.oauth).kept_redirect())
    try:
        stored = StoredLogin(tokens, spec.url, spec.oauth, loopback.redirect_uri, fresh=True)

        async def redirect(url: str) -> None:
            loopback.expect(url)
            say(url)
            with contextlib.suppress(Exception):  # no browser here: the URL was given
                await asyncio.to_thread(open_browser, url)

        async def callback() -> AuthorizationCodeResult:
            try:
                answer = await asyncio.wait_for(loopback.answer(), wait_s)
            except TimeoutError:
                raise LoginFailed(f"the browser did not come back within {wait_s:g} s") from None
            return AuthorizationCodeResult(code=answer.code, state=answer.state, iss=answer.iss)

        provider = OAuthProvider(stored, spec.url, loopback.redirect_uri, redirect, callback)
        async with (
            http_transport(spec, provider) as (read, write, *_),
            ClientSession(read, write, client_info=CLIENT_INFO) as session,
        ):
            await session.initialize()
        if not stored.got_tokens:
            return False
        stored.keep_metadata(provider.context.oauth_metadata)
        return True
    finally:
        await loopback.close()


def failure(error: BaseException) -> str:
    """One line for a login that failed."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    said = (LoginFailed, LoginRefused, OAuthFlowError, OAuthRegistrationError, OAuthTokenError)
    return str(error) if isinstance(error, said) and str(error) else describe(error)


async def _listen(spec: ServerSpec, kept_redirect: str | None) -> Loopback:
    """The browser's way back: on `oauth.callbackPort`, else on the port the kept
    registration names (when it is free), else on a free one."""
    port = spec.oauth.callback_port
    if port is not None:
        try:
            return await Loopback.open(port)
        except OSError as error:
            raise LoginFailed(
                f"cannot listen on 127.0.0.1:{port} for the browser's return "
                f"(mcpServers.{spec.name}.oauth.callbackPort): {error.strerror or error}"
            ) from None
    kept = urlsplit(kept_redirect).port if kept_redirect else None
    if kept is not None:
        with contextlib.suppress(OSError):
            return await Loopback.open(kept)
    return await Loopback.open(0)
