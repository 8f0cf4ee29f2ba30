"""The browser's way back to caretz after an OAuth login: a one-shot HTTP listener on
127.0.0.1 (RFC 8252's loopback redirect), `http://127.0.0.1:PORT/callback`.

It listens from the moment it is opened, so its port is known before the client is
registered, and answers one request: the one to `/callback` that carries the state of
the authorization request caretz made (`expect`). Any other request (a favicon, a stale
tab, a page that guessed the port) gets an error page and changes nothing. It serves on
the event loop that runs the login, and closes with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

PATH = "/callback"
MAX_REQUEST_BYTES = 16384
PAGE = (
    "<!doctype html><meta charset=utf-8><title>caretz</title>"
    "<p>{text}</p><p>You can close this tab and go back to caretz.</p>"
)


class LoginRefused(Exception):
    """The authorization server sent the browser back with an error (access_denied...)."""


@dataclass(frozen=True)
class CallbackAnswer:
    code: str
    state: str
    iss: str | None = None


class Loopback:
    """Open with `await Loopback.open(port)` (0: a free port); `close` when done."""

    def __init__(self, server: asyncio.Server, port: int):
        self._server = server
        self.port = port
        self.redirect_uri = f"http://127.0.0.1:{port}{PATH}"
        self._state = ""
        self._answer: asyncio.Future[CallbackAnswer] = asyncio.get_running_loop().create_future()

    @classmethod
    async def open(cls, port: int = 0) -> Loopback:
        """Listening on 127.0.0.1:`port`; OSError when it is taken."""
        holder: list[Loopback] = []

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await holder[0]._serve(reader, writer)

        server = await asyncio.start_server(handle, "127.0.0.1", port)
        loopback = cls(server, server.sockets[0].getsockname()[1])
        holder.append(loopback)
        return loopback

    def expect(self, authorization_url: str) -> None:
        """The authorization request the browser is sent to: only its state is taken back."""
        query = parse_qs(urlsplit(authorization_url).query)
        self._state = (query.get("state") or [""])[0]

    async def answer(self) -> CallbackAnswer:
        """The code the browser brought back; raises LoginRefused."""
        return await self._answer

    async def close(self) -> None:
        self._server.close()
        with contextlib.suppress(Exception):
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            target = await _request_target(reader)
            status, text = self._take(target)
            body = PAGE.format(text=text).encode()
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body
            )
            await writer.drain()
        except (OSError, ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass  # a client that went away or sent no HTTP: nothing to take from it
        finally:
            writer.close()

    def _take(self, target: str) -> tuple[str, str]:
        """The reply to a request for `target`, taking the answer from the right one."""
        parts = urlsplit(target)
        query = {key: values[0] for key, values in parse_qs(parts.query).items()}
        state = query.get("state", "")
        if (
            parts.path != PATH
            or self._answer.done()
            or not self._state
            or not secrets.compare_digest(state, self._state)
        ):
            return "400 Bad Request", "This is not the login caretz is waiting for."
        if "error" in query:
            why = query.get("error_description") or query["error"]
            self._answer.set_exception(LoginRefused(f"the authorization server refused: {why}"))
            return "200 OK", "The login was refused."
        if not query.get("code"):
            self._answer.set_exception(LoginRefused("the authorization server sent no code"))
            return "400 Bad Request", "The login brought back no code."
        self._answer.set_result(CallbackAnswer(query["code"], state, query.get("iss")))
        return "200 OK", "caretz is logged in."


async def _request_target(reader: asyncio.StreamReader) -> str:
    """The target of the HTTP request `reader` brings (its headers are read and left)."""
    head = await reader.readuntil(b"\r\n\r\n")
    if len(head) > MAX_REQUEST_BYTES:
        raise ValueError("request too large")
    method, target, _ = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ", 2)
    if method != "GET":
        raise ValueError(f"a {method} request")
    return target
