"""HTTP for the providers: a JSON POST whose answer is read as it arrives, over
connections kept open between requests.

A provider sends a request and reads an event stream back, so this is all the HTTP it
needs: HTTP/1.1 by h11 on a socket (connection.py), `ssl` (only for https) with
certifi's CA bundle, the environment's proxies. It replaces httpx on the way to a run's
first request, where importing httpx and httpcore cost more than everything else caretz
imports, and `http.client`, whose imports (`ssl`, `email`) cost three times h11's.

Errors are the kinds the retry logic tells apart: `ConnectFailed` (nothing answered,
safe to retry), `TimedOut` (`reading`: the stream went quiet), `Broken` (the connection
broke or spoke no HTTP), `BadURL`, `BadHeader` (a header HTTP cannot carry; the message
never quotes it, since it may be the key).
"""

from __future__ import annotations

import contextlib
import re
import socket
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any
from urllib.parse import SplitResult, urlsplit

import h11

from caretz import addresses
from caretz.providers import connection
from caretz.providers.connection import Connection, Key, NoAnswer, default_port

READ_SIZE = connection.READ_SIZE
# A reply's longest line is its last event, the whole reply once more (Responses).
MAX_LINE_BYTES = 16 << 20
MAX_BODY_BYTES = 16 << 20  # a body read whole (an error's, a JSON answer)
_NEWLINE = re.compile(rb"\r\n|\r|\n")


class WireError(Exception):
    """A request that did not get an HTTP answer."""


class ConnectFailed(WireError):
    """Nothing could be reached at the URL (refused, unknown host, unreachable)."""


class TimedOut(WireError):
    def __init__(self, message: str, *, reading: bool, answering: bool = False):
        super().__init__(message)
        self.reading = reading  # True: the answer began and then went quiet
        self.answering = answering  # True: the request went out and no answer came


class Broken(WireError):
    """The connection broke, or the other end did not speak HTTP."""


class BadURL(WireError):
    """A URL that is not http(s)://host[:port]/path."""


class TooLong(Broken):
    """A line of the answer longer than any a reply needs: a server that streams without end."""


class BadHeader(WireError):
    """A header value HTTP cannot carry (not quoted: it may hold the API key)."""


class Headers(Mapping[str, str]):
    """An answer's headers, looked up without regard to case; a repeated header's values
    joined with ", " (one list, RFC 9110 5.3)."""

    def __init__(self, pairs: Iterable[tuple[bytes, bytes]]):
        self._values: dict[str, str] = {}
        for raw_name, raw_value in pairs:
            name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
            self._values[name] = f"{self._values[name]}, {value}" if name in self._values else value

    def __getitem__(self, name: str) -> str:
        return self._values[name.lower()]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._values


class Response:
    """An answer whose body is read as it arrives."""

    def __init__(self, conn: Connection, head: h11.Response):
        self._conn = conn
        self.status_code = head.status_code
        self.reason_phrase = head.reason.decode("latin-1")
        self.headers: Mapping[str, str] = Headers(head.headers)
        self.finished = False  # the body was read to its end
        self._body: bytes | None = None

    def read1(self) -> bytes:
        """The body's next bytes as they arrive; b"" at its end."""
        if self.finished:
            return b""
        part: bytes | None = _reading(self._conn, self._conn.body_part)
        if part is None:
            self.finished = True
            return b""
        return part

    def iter_lines(self) -> Iterator[str]:
        """The body's lines as they arrive (\\n, \\r\\n or \\r ends one), decoded as UTF-8;
        a line longer than MAX_LINE_BYTES raises TooLong rather than filling memory."""
        pending: list[bytes] = []  # the start of a line no read has ended yet
        size, after_cr = 0, False
        while chunk := self.read1():
            if after_cr and chunk.startswith(b"\n"):  # the \n of a \r\n split between reads
                chunk = chunk[1:]
            after_cr = chunk.endswith(b"\r")
            if not _NEWLINE.search(chunk):
                pending.append(chunk)
                size += len(chunk)
                if size > MAX_LINE_BYTES:
                    raise TooLong(f"a line of the stream is longer than {MAX_LINE_BYTES:,} bytes")
                continue
            lines = _NEWLINE.split(b"".join([*pending, chunk]))
            tail = lines.pop()
            pending, size = ([tail], len(tail)) if tail else ([], 0)
            for line in lines:
                yield line.decode("utf-8", "replace")
        if pending:
            yield b"".join(pending).decode("utf-8", "replace")

    def read(self) -> bytes:
        """The body, or its first MAX_BODY_BYTES (the rest is not read)."""
        if self._body is None:
            parts, size = [], 0
            while size <= MAX_BODY_BYTES and (part := self.read1()):
                parts.append(part)
                size += len(part)
            self._body = b"".join(parts)[:MAX_BODY_BYTES]
        return self._body

    @property
    def text(self) -> str:
        return self.read().decode("utf-8", "replace")


class Client:
    """Requests over kept-open connections: one per request in flight (a provider shared
    by threads, as a judge's evaluation and subagents are, sends several at once), each
    kept for the next request to its origin when its answer was read to the end and
    neither end closes it.

    `connect_s` bounds the connection (and the proxy's tunnel, and the TLS handshake);
    `read_s` bounds each wait for bytes, so a stream that sends nothing for that long
    times out.
    """

    KEPT = 8  # idle connections kept at most

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
        self._idle: list[Connection] = []
        self._lock = threading.Lock()

    def close(self) -> None:
        """Close the idle connections (one in use closes when its request ends)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    @contextlib.contextmanager
    def stream(
        self, method: str, url: str, body: bytes | None, headers: Mapping[str, str]
    ) -> Iterator[Response]:
        """The answer to one request, its body unread (waiting `read_s` for it); its
        connection is kept for the next request only when the body was read to its end."""
        with self.exchange(method, url, body, headers) as sent:
            response = sent.answer(self.read_s)
            if response is None:
                raise TimedOut("timed out waiting for the server", reading=False, answering=True)
            yield response

    @contextlib.contextmanager
    def exchange(
        self, method: str, url: str, body: bytes | None, headers: Mapping[str, str]
    ) -> Iterator[Exchange]:
        """One request sent, its answer awaited a slice at a time (`Exchange.answer`)."""
        target = _split(url)
        proxy = self._proxy(target)
        key: Key = (
            target.scheme,
            target.hostname or "",
            target.port or default_port(target),
            proxy,
        )
        forwarding = (
            connection.proxy_auth(_split(proxy)) if proxy and target.scheme == "http" else None
        )
        request = _request(method, target, headers, body, forwarding)
        events = (request, *([h11.Data(data=body)] if body else []), h11.EndOfMessage())
        sent = Exchange(self, key, events, forwarding)
        try:
            yield sent
        finally:
            sent.end()

    def _proxy(self, target: SplitResult) -> str | None:
        if not self.trust_env:
            return None
        try:
            return connection.proxy_for(target)
        except ValueError as error:
            raise BadURL(str(error)) from None

    def _kept(self, key: Key) -> Connection | None:
        """An idle connection for `key` the server has not closed, taken from the kept."""
        with self._lock:
            mine = [conn for conn in self._idle if conn.key == key]
            for conn in mine:
                self._idle.remove(conn)
        found = None
        for conn in mine:
            if conn.stale():
                conn.close()
            elif found is None:
                found = conn
            else:
                self._keep(conn)
        return found

    def _keep(self, conn: Connection) -> None:
        with self._lock:
            if len(self._idle) < self.KEPT:
                self._idle.append(conn)
                return
        conn.close()

    def _connect(self, key: Key, forwarding: dict[str, str] | None) -> Connection:
        scheme, host, port, proxy = key
        try:
            sock = connection.open_socket(
                scheme, host, port, _split(proxy) if proxy else None, self.connect_s
            )
        except TimeoutError:
            raise TimedOut(f"timed out connecting to {host}:{port}", reading=False) from None
        except OSError as error:  # refused, unknown host, unreachable, TLS or tunnel refused
            raise ConnectFailed(str(error) or type(error).__name__) from None
        sock.settimeout(self.read_s)
        if self.on_socket is not None:
            self.on_socket(sock)
        return Connection(sock, key, forwarding)


class Exchange:
    """A request on its connection and the wait for its answer: `answer(wait_s)` gives
    the answer's head once it came, or None when nothing came within `wait_s`, so the
    caller can say it is still waiting and ask again. A kept connection the server had
    closed while it sat idle is replaced, and the request sent again, once."""

    def __init__(
        self,
        client: Client,
        key: Key,
        events: tuple[h11.Event, ...],
        forwarding: dict[str, str] | None,
    ):
        self._client, self._key, self._events, self._forwarding = client, key, events, forwarding
        self.response: Response | None = None
        conn = client._kept(key)
        self._fresh = conn is None  # a new connection: no second chance
        self._conn = conn or client._connect(key, forwarding)
        self._send()

    def _send(self) -> None:
        while True:
            try:
                self._conn.send(*self._events)
                return
            except BaseException as error:
                self._failed(error)

    def answer(self, wait_s: float) -> Response | None:
        """The answer's head if it comes within `wait_s` (None: not yet; ask again)."""
        while self.response is None:
            conn = self._conn
            try:
                conn.sock.settimeout(max(wait_s, 0.001))
                head = conn.head()
            except TimeoutError:
                return None  # nothing yet: the connection stays as it is
            except BaseException as error:
                self._failed(error)
                self._send()
                continue
            finally:
                with contextlib.suppress(OSError):
                    conn.sock.settimeout(self._client.read_s)
            self.response = Response(conn, head)
        return self.response

    def _failed(self, error: BaseException) -> None:
        """The connection failed: replace a stale kept one (returns: send again), or raise
        the failure as one of the kinds above."""
        self._conn.close()
        if isinstance(error, (NoAnswer, ConnectionResetError, BrokenPipeError)):
            if self._fresh:
                raise Broken("the server closed the connection before answering") from None
            self._fresh = True  # the server had closed the idle connection: a fresh one
            self._conn = self._client._connect(self._key, self._forwarding)
            return
        if isinstance(error, (TimeoutError, h11.ProtocolError, OSError)):
            raise _told(self._conn, error) from None
        raise error  # Ctrl-C while waiting: the connection is not kept

    def end(self) -> None:
        """Keep the connection for the next request when the answer was read whole."""
        conn, response = self._conn, self.response
        if response is not None and response.finished and conn.reusable():
            conn.next_exchange()
            self._client._keep(conn)
        else:
            conn.close()


def _request(
    method: str,
    target: SplitResult,
    headers: Mapping[str, str],
    body: bytes | None,
    forwarding: dict[str, str] | None,
) -> h11.Request:
    """The request's head; raises BadURL or BadHeader (never quoting a header's value)."""
    path = target.path or "/"
    if target.query:
        path += "?" + target.query
    pairs = [("Host", target.netloc.rpartition("@")[2]), *headers.items()]
    if forwarding is not None:
        path = target.geturl()  # a proxy for plain HTTP is sent the whole URL
        pairs += forwarding.items()
    if body is not None:
        pairs.append(("Content-Length", str(len(body))))
    if not path.isascii() or any(char <= " " or char == "\x7f" for char in path):
        raise BadURL("the URL holds characters a request line cannot carry")
    try:
        encoded = [(name.encode("ascii"), value.encode("latin-1")) for name, value in pairs]
        return h11.Request(method=method, target=path.encode("ascii"), headers=encoded)
    except (UnicodeEncodeError, h11.LocalProtocolError):  # a line break, no Latin-1, no name
        raise BadHeader("a header holds characters HTTP cannot carry") from None


def _reading(conn: Connection, read: Callable[[], Any]) -> Any:
    """`read()`, its failures told as the kinds above."""
    try:
        return read()
    except (TimeoutError, h11.ProtocolError, NoAnswer, OSError) as error:
        raise _told(conn, error) from None


def _told(conn: Connection, error: BaseException) -> WireError:
    """A failure while sending or reading, as one of the kinds above."""
    if isinstance(error, TimeoutError):
        return TimedOut("timed out waiting for the server", reading=True)
    if isinstance(error, (h11.RemoteProtocolError, NoAnswer)) and conn.peer_closed:
        return Broken("the server closed the connection mid-answer")
    if isinstance(error, h11.ProtocolError):
        return Broken(f"the server did not answer in HTTP ({str(error)[:80]})")
    return Broken(str(error) or type(error).__name__)


def _split(url: str) -> SplitResult:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (a bad port raises here)
    except ValueError as error:
        raise BadURL(str(error)) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadURL(f"{url!r} is not an http:// or https:// URL")
    return parts


def names_this_machine(url: str) -> bool:
    """Whether `url` names this machine (localhost, ::1, 127.x)."""
    try:
        host = (urlsplit(url).hostname or "") if "://" in url else ""
    except ValueError:
        return False
    return addresses.names_this_machine(host)


def get(url: str, timeout_s: float) -> Response:
    """A GET of `url`, its body read (no proxy: for servers on this machine)."""
    client = Client(connect_s=timeout_s, read_s=timeout_s, trust_env=False)
    try:
        with client.stream("GET", url, None, {"accept": "application/json"}) as response:
            response.read()
            return response
    finally:
        client.close()


tls_context = connection.tls_context

__all__ = [
    "BadHeader",
    "BadURL",
    "Broken",
    "Client",
    "ConnectFailed",
    "Exchange",
    "Response",
    "TimedOut",
    "WireError",
    "get",
    "names_this_machine",
    "tls_context",
]
