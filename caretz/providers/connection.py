"""One HTTP/1.1 connection of the providers: a socket to the origin (TLS for https,
through the environment's proxy when it names one), the protocol read and written by h11.

h11 is HTTP/1.1 without I/O: request events in, bytes out; bytes in, response events
out (framing by Content-Length, chunks or the connection's end; keep-alive; CONNECT).
This module does its I/O on a blocking socket whose timeout bounds each wait. It needs
neither `http.client` nor `email` (whose imports cost a run's start more than all of
h11); `ssl` and the CA bundle load with the first https connection.

Failures are the socket's own (`TimeoutError`, `OSError`, TLS errors among them), h11's
`ProtocolError`s, `NoAnswer`, and `ValueError` for a proxy caretz cannot use: wire.py
tells them apart for the retries.
"""

from __future__ import annotations

import base64
import contextlib
import os
import select
import socket
from typing import TYPE_CHECKING
from urllib.parse import SplitResult, unquote

import h11

from caretz.lazy import lazy_module

if TYPE_CHECKING:
    import ssl
    from urllib import request as urllib_request

    import certifi
else:
    certifi = lazy_module("certifi")  # the bundle's path: with the first https request
    ssl = lazy_module("ssl")  # only for https: a run against a plain-http endpoint never loads it
    # Its readers of the proxy variables (and http.client, email): only with one of them set.
    urllib_request = lazy_module("urllib.request")

if TYPE_CHECKING:
    from ssl import SSLContext

READ_SIZE = 64 * 1024
Key = tuple[str, str, int, str | None]  # scheme, host, port, the proxy's URL


class NoAnswer(Exception):
    """The connection ended before a byte of the answer came (a kept connection the
    server had closed while it sat idle)."""


class Connection:
    """A socket to one origin (or to the proxy forwarding to it) and h11's state for it;
    one exchange at a time."""

    def __init__(self, sock: socket.socket, key: Key, forwarding: dict[str, str] | None):
        self.sock = sock
        self.key = key
        self.forwarding = forwarding  # a plain-HTTP proxy's own headers (None: no proxy)
        self.peer_closed = False  # the other end closed its side (this exchange or before)
        self._h11 = h11.Connection(h11.CLIENT)
        self._heard = False  # a byte of this exchange's answer came

    def send(self, *events: h11.Event) -> None:
        self.sock.sendall(b"".join(self._h11.send(event) or b"" for event in events))

    def head(self) -> h11.Response:
        """The answer's status and headers (interim 1xx answers skipped)."""
        while True:
            event = self._next()
            if isinstance(event, h11.Response):
                return event
            if not isinstance(event, h11.InformationalResponse):
                raise h11.RemoteProtocolError(f"no answer but {type(event).__name__}")

    def body_part(self) -> bytes | None:
        """The next bytes of the body as they arrive; None at its end."""
        while True:
            event = self._next()
            if isinstance(event, h11.EndOfMessage):
                return None
            if isinstance(event, h11.Data):
                if event.data:
                    return bytes(event.data)
                continue
            raise h11.RemoteProtocolError(f"a {type(event).__name__} inside an answer")

    def _next(self) -> h11.Event:
        while True:
            event = self._h11.next_event()
            if event is not h11.NEED_DATA:
                return event  # type: ignore[return-value]  # PAUSED: after EndOfMessage, unread
            data = self.sock.recv(READ_SIZE)
            if not data:
                self.peer_closed = True
                if not self._heard:
                    raise NoAnswer("the connection closed before an answer")
            self._heard = True
            self._h11.receive_data(data)

    def reusable(self) -> bool:
        """Whether the exchange ended whole and both ends keep the connection open."""
        return self._h11.our_state is h11.DONE and self._h11.their_state is h11.DONE

    def next_exchange(self) -> None:
        self._h11.start_next_cycle()
        self._heard = False

    def stale(self) -> bool:
        """Whether the server closed it (or spoke out of turn) while it sat idle."""
        try:
            readable, _, _ = select.select([self.sock], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


def open_socket(
    scheme: str, host: str, port: int, proxy: SplitResult | None, timeout_s: float
) -> socket.socket:
    """A socket to host:port, through `proxy` (a CONNECT tunnel for https), TLS for https;
    `timeout_s` bounds each step. Raises TimeoutError or OSError (TLS's errors included)."""
    where = (proxy.hostname or "", proxy.port or default_port(proxy)) if proxy else (host, port)
    # An ASCII name as bytes: a str goes through the IDNA codec, imported for it.
    address = (where[0].encode() if where[0].isascii() else where[0], where[1])
    # typeshed names str only; getaddrinfo takes the name as bytes too.
    sock = socket.create_connection(address, timeout=timeout_s)  # type: ignore[arg-type]
    try:
        if proxy is not None and scheme == "https":
            _tunnel(sock, host, port, proxy_auth(proxy))
        if scheme == "https":
            sock = tls_context().wrap_socket(sock, server_hostname=host)
    except BaseException:
        sock.close()
        raise
    return sock


def _tunnel(sock: socket.socket, host: str, port: int, auth: dict[str, str]) -> None:
    """Ask an HTTP proxy for a tunnel to host:port; raises OSError when it refuses."""
    authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    request = h11.Request(
        method="CONNECT", target=authority, headers=[("Host", authority), *auth.items()]
    )
    asking = Connection(sock, ("http", host, port, None), None)
    try:
        asking.send(request, h11.EndOfMessage())
        answer = asking.head()
    except (NoAnswer, h11.ProtocolError) as error:
        raise OSError(f"the proxy did not answer the tunnel's request ({error})") from None
    if not 200 <= answer.status_code < 300:
        reason = answer.reason.decode("latin-1")
        raise OSError(f"the proxy refused the tunnel: {answer.status_code} {reason}")


def default_port(parts: SplitResult) -> int:
    return 443 if parts.scheme == "https" else 80


# -- the environment's proxies and CA bundle --------------------------------------------

_PROXY_VARIABLES = {"http_proxy", "https_proxy", "all_proxy", "no_proxy"}


def proxy_for(target: SplitResult) -> str | None:
    """The proxy the environment names for `target` (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY,
    NO_PROXY; either case), or None. Raises ValueError for one that is not http://."""
    if not any(name.lower() in _PROXY_VARIABLES for name in os.environ):
        return None
    proxies = urllib_request.getproxies_environment()
    host = target.netloc.rpartition("@")[2]
    # Undocumented, so absent from typeshed; the function urllib's own openers call.
    if urllib_request.proxy_bypass_environment(host, proxies):  # type: ignore[attr-defined]
        return None
    proxy = proxies.get(target.scheme) or proxies.get("all")
    if proxy and "://" not in proxy:
        proxy = "http://" + proxy
    if proxy and not proxy.startswith("http://"):
        raise ValueError(f"proxy {proxy.split('@')[-1]!r}: only http:// proxies are supported")
    return proxy


def proxy_auth(proxy: SplitResult) -> dict[str, str]:
    if proxy.username is None:
        return {}
    pair = f"{unquote(proxy.username)}:{unquote(proxy.password or '')}".encode()
    return {"Proxy-Authorization": "Basic " + base64.b64encode(pair).decode()}


_tls: SSLContext | None = None


def tls_context() -> SSLContext:
    """Certificates checked against SSL_CERT_FILE / SSL_CERT_DIR when set, else certifi's
    bundle; built once (loading a bundle takes tens of milliseconds)."""
    global _tls
    if _tls is None:
        cafile, capath = os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")
        if cafile and os.path.isfile(cafile):
            _tls = ssl.create_default_context(cafile=cafile)
        elif capath and os.path.isdir(capath):
            _tls = ssl.create_default_context(capath=capath)
        else:
            _tls = ssl.create_default_context(cafile=certifi.where())
    return _tls
