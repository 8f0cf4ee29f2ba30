"""HTTP for the providers, on the standard library: a JSON POST whose answer is read as it
arrives, one connection kept open between requests.

A provider sends one request at a time and reads an event stream back, so this is all the
HTTP it needs: `http.client` for the connection, `ssl` (only for https) with certifi's CA
bundle, the environment's proxies. It replaces httpx on the way to a run's first request,
where importing httpx and httpcore cost more than everything else caretz imports.

Errors are the kinds the retry logic tells apart: `ConnectFailed` (nothing answered,
safe to retry), `TimedOut` (`reading`: the stream went quiet), `Broken` (the connection
broke or spoke no HTTP), `BadURL`, `BadHeader` (a header HTTP cannot carry; the message
never quotes it, since it may be the key).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import select
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import SplitResult, unquote, urlsplit

if TYPE_CHECKING:
    import socket
    import ssl

READ_SIZE = 64 * 1024
_NEWLINE = re.compile(rb"\r\n|\r|\n")


class WireError(Exception):
    """A request that did not get an HTTP answer."""


class ConnectFailed(WireError):
    """Nothing could be reached at the URL (refused, unknown host, unreachable)."""


class TimedOut(WireError):
    def __init__(self, message: str, *, reading: bool):
        super().__init__(message)
        self.reading = reading  # True: the answer began and then went quiet


class Broken(WireError):
    """The connection broke, or the other end did not speak HTTP."""


class BadURL(WireError):
    """A URL that is not http(s)://host[:port]/path."""


class BadHeader(WireError):
    """A header value HTTP cannot carry (not quoted: it may hold the API key)."""


class Response:
    """An answer whose body is read as it arrives."""

    def __init__(self, raw: http.client.HTTPResponse):
        self._raw = raw
        self.status_code = raw.status
        self.reason_phrase = raw.reason
        self.headers: Mapping[str, str] = raw.headers  # looked up without regard to case
        self._body: bytes | None = None

    def iter_lines(self) -> Iterator[str]:
        """The body's lines as they arrive (\\n, \\r\\n or \\r ends one), decoded as UTF-8."""
        pending, after_cr = b"", False
        while chunk := _reading(lambda: self._raw.read1(READ_SIZE)):
            if after_cr and chunk.startswith(b"\n"):  # the \n of a \r\n split between reads
                chunk = chunk[1:]
            data = pending + chunk
            lines = _NEWLINE.split(data)
            pending = lines.pop()
            after_cr = data.endswith(b"\r")
            for line in lines:
                yield line.decode("utf-8", "replace")
        if pending:
            yield pending.decode("utf-8", "replace")

    def read(self) -> bytes:
        if self._body is None:
            self._body = _reading(self._raw.read)
        return self._body

    @property
    def text(self) -> str:
        return self.read().decode("utf-8", "replace")

    def json(self) -> Any:
        return json.loads(self.read())


class Client:
    """Requests to one origin at a time over a kept-open connection (a new one when the
    origin changes, the last answer was not read to its end, or the server closed it).

    `connect_s` bounds the connection (and the proxy's tunnel); `read_s` bounds each wait
    for bytes, so a stream that sends nothing for that long times out.
    """

    def __init__(
        self,
        *,
        connect_s: float,
        read_s: float,
        trust_env: bool = True,
        on_socket: Callable[[socket.socket], None] | None = None,
    ):
        self.connect_s = connect_s
        self.read_s = read_s
        self.trust_env = trust_env
        self.on_socket = on_socket  # told each new connection's socket (for an abort)
        # One kept connection per thread: a provider is shared by threads that send at
        # once (the judge's evaluation runs, subagents), and a connection carries one
        # exchange at a time.
        self._kept = threading.local()

    @property
    def _conn(self) -> http.client.HTTPConnection | None:
        return getattr(self._kept, "conn", None)

    @_conn.setter
    def _conn(self, conn: http.client.HTTPConnection | None) -> None:
        self._kept.conn = conn

    @property
    def _origin(self) -> tuple[str, str, int] | None:
        return getattr(self._kept, "origin", None)

    @_origin.setter
    def _origin(self, origin: tuple[str, str, int] | None) -> None:
        self._kept.origin = origin

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    @contextlib.contextmanager
    def stream(
        self, method: str, url: str, body: bytes | None, headers: Mapping[str, str]
    ) -> Iterator[Response]:
        """The answer to one request, its body unread; the connection is kept for the next
        request only when the body was read to its end."""
        raw = self._send(method, url, body, headers)
        finished = False
        try:
            yield Response(raw)
            finished = raw.isclosed() and not raw.will_close
        finally:
            if not finished:
                self.close()

    def _send(
        self, method: str, url: str, body: bytes | None, headers: Mapping[str, str]
    ) -> http.client.HTTPResponse:
        target = _split(url)
        for attempt in (1, 2):
            reused = self._ready(target)
            try:
                return self._exchange(method, target, body, headers)
            except (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected) as error:
                self.close()
                if reused and attempt == 1:
                    continue  # the server had closed the idle connection: a fresh one
                raise Broken(f"the server closed the connection: {error}") from None
        raise AssertionError("unreachable")

    def _ready(self, target: SplitResult) -> bool:
        """A connection to `target`'s origin; True when it is one kept from before."""
        origin = (target.scheme, target.hostname or "", target.port or _port(target))
        if self._conn is not None and (origin != self._origin or _closed(self._conn)):
            self.close()
        if self._conn is not None:
            return True
        self._conn = self._connect(target)
        self._origin = origin
        return False

    def _connect(self, target: SplitResult) -> http.client.HTTPConnection:
        proxy = _proxy_for(target) if self.trust_env else None
        host, port = target.hostname or "", target.port or _port(target)
        via = _split(proxy) if proxy else None
        if target.scheme == "https":
            context = tls_context()
            if via is not None:
                conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                    via.hostname or "", via.port or _port(via), timeout=self.connect_s,
                    context=context,
                )  # fmt: skip
                conn.set_tunnel(host, port, headers=_proxy_auth(via))
            else:
                conn = http.client.HTTPSConnection(
                    host, port, timeout=self.connect_s, context=context
                )
        elif via is not None:
            conn = _Forwarding(via.hostname or "", via.port or _port(via), timeout=self.connect_s)
            conn.proxy_headers = _proxy_auth(via)
        else:
            conn = http.client.HTTPConnection(host, port, timeout=self.connect_s)
        try:
            conn.connect()
        except TimeoutError:
            raise TimedOut(f"timed out connecting to {host}:{port}", reading=False) from None
        except OSError as error:  # refused, unknown host, unreachable, TLS refused
            raise ConnectFailed(str(error) or type(error).__name__) from None
        assert conn.sock is not None
        conn.sock.settimeout(self.read_s)
        if self.on_socket is not None:
            self.on_socket(conn.sock)
        return conn

    def _exchange(
        self, method: str, target: SplitResult, body: bytes | None, headers: Mapping[str, str]
    ) -> http.client.HTTPResponse:
        assert self._conn is not None
        conn = self._conn
        path = target.path or "/"
        if target.query:
            path += "?" + target.query
        if isinstance(conn, _Forwarding):
            path = target.geturl()  # a proxy for plain HTTP is sent the whole URL
            headers = {**headers, **conn.proxy_headers}
        host = target.netloc.rpartition("@")[2]
        try:
            conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        except ValueError as error:  # control characters, or no ASCII, in the URL
            self.close()
            raise BadURL(str(error)) from None
        try:
            conn.putheader("Host", host)
            for name, value in headers.items():
                conn.putheader(name, value)
            if body is not None:
                conn.putheader("Content-Length", str(len(body)))
        except ValueError:  # UnicodeEncodeError included: not Latin-1, or a line break
            self.close()
            raise BadHeader("a header holds characters HTTP cannot carry") from None
        try:
            conn.endheaders(body)
        except TimeoutError:
            self.close()
            raise TimedOut("timed out sending the request", reading=False) from None
        return _reading(conn.getresponse)


class _Forwarding(http.client.HTTPConnection):
    """A connection to an HTTP proxy that forwards plain-HTTP requests (whole URLs)."""

    proxy_headers: dict[str, str]


def _reading(read: Any) -> Any:
    """`read()`, its failures told as the kinds above."""
    try:
        return read()
    except TimeoutError:
        raise TimedOut("timed out waiting for the server", reading=True) from None
    except (http.client.IncompleteRead, http.client.HTTPException) as error:
        raise Broken(f"the server broke off the answer: {type(error).__name__}") from None
    except (ConnectionError, OSError) as error:
        raise Broken(str(error) or type(error).__name__) from None


def _closed(conn: http.client.HTTPConnection) -> bool:
    """Whether a kept connection was closed (or spoke out of turn) while it sat idle."""
    sock = conn.sock
    if sock is None:
        return True
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


def _split(url: str) -> SplitResult:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (a bad port raises here)
    except ValueError as error:
        raise BadURL(str(error)) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadURL(f"{url!r} is not an http:// or https:// URL")
    return parts


def _port(parts: SplitResult) -> int:
    return 443 if parts.scheme == "https" else 80


def is_loopback(url: str) -> bool:
    """Whether `url` names this machine (localhost, ::1, 127.x)."""
    try:
        host = (urlsplit(url).hostname or "").lower() if "://" in url else ""
    except ValueError:
        return False
    return host in ("localhost", "::1") or host.startswith("127.")


# -- the environment's proxies and CA bundle --------------------------------------------

_PROXY_VARIABLES = {"http_proxy", "https_proxy", "all_proxy", "no_proxy"}


def _proxy_for(target: SplitResult) -> str | None:
    """The proxy the environment names for `target` (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY,
    NO_PROXY; either case), or None."""
    if not any(name.lower() in _PROXY_VARIABLES for name in os.environ):
        return None
    import urllib.request  # only with a proxy variable set

    proxies = urllib.request.getproxies_environment()
    host = target.netloc.rpartition("@")[2]
    if urllib.request.proxy_bypass_environment(host, proxies):
        return None
    proxy = proxies.get(target.scheme) or proxies.get("all")
    if proxy and "://" not in proxy:
        proxy = "http://" + proxy
    if proxy and not proxy.startswith("http://"):
        raise BadURL(f"proxy {proxy.split('@')[-1]!r}: only http:// proxies are supported")
    return proxy


def _proxy_auth(proxy: SplitResult) -> dict[str, str]:
    if proxy.username is None:
        return {}
    import base64

    pair = f"{unquote(proxy.username)}:{unquote(proxy.password or '')}".encode()
    return {"Proxy-Authorization": "Basic " + base64.b64encode(pair).decode()}


_tls: ssl.SSLContext | None = None


def tls_context() -> ssl.SSLContext:
    """Certificates checked against SSL_CERT_FILE / SSL_CERT_DIR when set, else certifi's
    bundle; built once (loading a bundle takes tens of milliseconds)."""
    global _tls
    if _tls is None:
        import ssl  # only for https

        cafile, capath = os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")
        if cafile and os.path.isfile(cafile):
            _tls = ssl.create_default_context(cafile=cafile)
        elif capath and os.path.isdir(capath):
            _tls = ssl.create_default_context(capath=capath)
        else:
            import certifi

            _tls = ssl.create_default_context(cafile=certifi.where())
    return _tls


def get(url: str, timeout_s: float) -> Response:
    """A GET of `url`, its body read (no proxy: for servers on this machine)."""
    client = Client(connect_s=timeout_s, read_s=timeout_s, trust_env=False)
    try:
        with client.stream("GET", url, None, {"accept": "application/json"}) as response:
            response.read()
            return response
    finally:
        client.close()


__all__ = [
    "BadHeader",
    "BadURL",
    "Broken",
    "Client",
    "ConnectFailed",
    "Response",
    "TimedOut",
    "WireError",
    "get",
    "is_loopback",
    "tls_context",
]
