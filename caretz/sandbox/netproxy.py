"""caretz's HTTP and HTTPS proxy for commands: only the allowed hosts get through.

It runs in caretz's own process (a thread accepting, two threads a connection), outside
the sandbox, on a listening socket it is handed: under bubblewrap one made inside the
session's network namespace (sandbox/netbridge.py), under Landlock one on the host's
loopback. Commands find it through HTTP_PROXY and HTTPS_PROXY.

Two kinds of request, each checked by the session's gate (sandbox/netgate.py) before any
connection is made:

- `CONNECT host:port` (HTTPS, or any tunnel): the tunnel's bytes are copied both ways,
  never read (no TLS interception);
- a request for an absolute `http://` URL: sent on in origin form, with the URL's own
  authority as its Host header (so an allowed name cannot carry another site's Host), the
  hop-by-hop and Proxy-* headers dropped and `Connection: close`, then copied both ways.

A refusal is answered `403` with one line naming the host and how to allow it; a host that
cannot be reached is `502`. One connection carries one request.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from dataclasses import dataclass
from urllib.parse import urlsplit

from caretz import inbound
from caretz.sandbox.netgate import Admitted, NetworkGate, Refusal

HEAD_LIMIT = 64 * 1024
HEAD_TIMEOUT_S = 30.0
CONNECT_TIMEOUT_S = 10.0
MAX_SOCKETS = 256  # commands' connections and the proxy's own to the hosts, open at once
CHUNK = 64 * 1024
HOP_BY_HOP = frozenset(
    {
        "connection",
        "proxy-connection",
        "keep-alive",
        "proxy-authorization",
        "proxy-authenticate",
        "te",
        "trailer",
        "upgrade",
        "host",
    }
)


class BadRequest(ValueError):
    """A request the proxy does not serve; the message is the 400's body."""


@dataclass(frozen=True)
class Request:
    method: str
    target: str
    version: str
    headers: tuple[tuple[str, str], ...]


class ProxyServer:
    """Serves commands' proxy requests on `listener` until `close()`."""

    def __init__(self, listener: socket.socket, gate: NetworkGate):
        self.listener = listener
        self.gate = gate  # the session's; each launch gives it the running sandbox's allowlist
        self.port: int = listener.getsockname()[1]
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._accept, name="caretz-proxy", daemon=True)

    def start(self) -> ProxyServer:
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop accepting and cut every open connection."""
        with self._lock:
            self._closed = True
            sockets = [self.listener, *self._open]
            self._open.clear()
        for sock in sockets:
            _cut(sock)  # shutdown wakes the thread blocked in accept() or recv()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(CONNECT_TIMEOUT_S)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # closed
            if not self._track(client):
                _answer(client, 503, "caretz's proxy has too many connections open")
                _cut(client)
                continue
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _track(self, sock: socket.socket) -> bool:
        with self._lock:
            if self._closed or len(self._open) >= MAX_SOCKETS:
                return False
            self._open.add(sock)
            return True

    def _forget(self, *sockets: socket.socket) -> None:
        with self._lock:
            for sock in sockets:
                self._open.discard(sock)
        for sock in sockets:
            _cut(sock)

    def _serve(self, client: socket.socket) -> None:
        upstream: socket.socket | None = None
        try:
            client.settimeout(HEAD_TIMEOUT_S)
            head, rest = read_head(client)
            request = parse_request(head)
            host, port = request_host(request)
            decision = self.gate.admit(host, port)
            if isinstance(decision, Refusal):
                _answer(client, 403, decision.message())
                return
            upstream = _connect(decision)
            if upstream is None or not self._track(upstream):
                _answer(client, 502, f"caretz's proxy could not reach {host}:{port}")
                return
            if request.method == "CONNECT":
                client.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                upstream.sendall(rest)
            else:
                upstream.sendall(origin_form(request, host, port) + rest)
            client.settimeout(None)
            _relay(client, upstream)
        except BadRequest as error:
            _answer(client, 400, str(error))
        except ValueError as error:  # a name no resolver takes (UnicodeError, IDNA), and such
            _answer(client, 400, f"caretz's proxy cannot read the request: {error}")
        except OSError:
            pass  # the command or the host went away
        finally:
            self._forget(client, *([upstream] if upstream is not None else []))


def read_head(sock: socket.socket) -> tuple[bytes, bytes]:
    """The request's head (up to the blank line) and whatever came after it."""
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) > HEAD_LIMIT:
            raise BadRequest("the request's head is too long")
        chunk = sock.recv(CHUNK)
        if not chunk:
            raise OSError("closed before the request's head ended")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def parse_request(head: bytes) -> Request:
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequest("not an HTTP/1.x request")
    headers: list[tuple[str, str]] = []
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip() or line[:1] in (" ", "\t"):
            raise BadRequest("a malformed header line")
        headers.append((name, value.strip()))
    return Request(parts[0].upper(), parts[1], parts[2], tuple(headers))


def request_host(request: Request) -> tuple[str, int]:
    """The host and port a request is for: CONNECT's authority, or an http:// URL's."""
    if request.method == "CONNECT":
        host, port = split_authority(request.target)
        if port is None:
            raise BadRequest("CONNECT needs host:port")
        return host, port
    if not request.target.lower().startswith("http://"):
        raise BadRequest(
            "caretz's proxy takes CONNECT host:port (HTTPS) or a request for an http:// URL"
        )
    host, port = split_authority(urlsplit(request.target).netloc)
    return host, 80 if port is None else port


def split_authority(authority: str) -> tuple[str, int | None]:
    """`host:port`, `[v6]:port` or `host` → (host, port or None); no user info."""
    if "@" in authority or not authority:
        raise BadRequest("no host in the request")
    if authority.startswith("["):
        host, _, tail = authority[1:].partition("]")
        port_text = tail[1:] if tail.startswith(":") else tail
    else:
        host, _, port_text = authority.partition(":")
    if not host.isascii() or not host.isprintable() or " " in host:
        raise BadRequest("not a host name")
    if not port_text:
        return host, None
    port = inbound.port_number(port_text)
    if port is None:
        raise BadRequest("not a port")
    return host, port


def origin_form(request: Request, host: str, port: int) -> bytes:
    """The request as sent to the host itself: path only, its own Host, one request."""
    url = urlsplit(request.target)
    path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    named = {
        value.strip().lower() for name, value in request.headers if name.lower() == "connection"
    }
    dropped = HOP_BY_HOP | {token.strip() for value in named for token in value.split(",")}
    authority = f"[{host}]" if ":" in host else host
    lines = [f"{request.method} {path} {request.version}"]
    lines.append(f"Host: {authority}" + ("" if port == 80 else f":{port}"))
    lines += [f"{name}: {value}" for name, value in request.headers if name.lower() not in dropped]
    lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _connect(admitted: Admitted) -> socket.socket | None:
    """A connection to the first checked address that answers."""
    for address in admitted.addresses:
        try:
            sock = socket.create_connection((address, admitted.port), timeout=CONNECT_TIMEOUT_S)
        except OSError:
            continue
        sock.settimeout(None)
        return sock
    return None


def _relay(client: socket.socket, upstream: socket.socket) -> None:
    """Copy both ways until both sides have finished (one thread per direction)."""
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()


def _pump(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(CHUNK):
            target.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            target.shutdown(socket.SHUT_WR)


def _answer(client: socket.socket, status: int, text: str) -> None:
    reason = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway", 503: "Unavailable"}
    body = (text + "\n").encode()
    head = (
        f"HTTP/1.1 {status} {reason[status]}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    with contextlib.suppress(OSError):
        client.sendall(head.encode() + body)


def _cut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()
