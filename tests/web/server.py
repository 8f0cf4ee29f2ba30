"""A loopback web server for the web tools' tests: scripted routes, every request seen.

    with WebServer() as web:
        web.routes["/docs.html"] = Route(body=DOCS_PAGE)
        web.url("/docs.html")               # http://127.0.0.1:PORT/docs.html
        web.url("/docs.html", "localhost")  # the same server under another host name
        assert web.seen == [Seen("/docs.html", "127.0.0.1:PORT")]

A route that stalls sends its headers and the first bytes, then nothing until the server
stops: a slow server that no test has to time. With `tls` (a certificate and its key),
the server speaks HTTPS.
"""

from __future__ import annotations

import contextlib
import ssl
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


@dataclass
class Route:
    body: bytes = b""
    status: int = 200
    content_type: str | None = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    stall_after: int | None = None  # bytes of the body sent before it stalls


@dataclass(frozen=True)
class Seen:
    path: str
    host: str  # the Host header


@dataclass(frozen=True)
class Received:
    """A request in full (for the search backends' tests)."""

    method: str
    path: str  # with its query
    headers: dict[str, str]  # lower-case names
    body: bytes


class WebServer:
    def __init__(self, tls: tuple[Path, Path] | None = None):
        self.routes: dict[str, Route] = {}
        self.seen: list[Seen] = []
        self.received: list[Received] = []
        self.tls = tls
        self.released = threading.Event()  # set at stop: stalled routes end
        self._httpd: ThreadingHTTPServer | None = None
        self.port = 0

    def __enter__(self) -> WebServer:
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        httpd.daemon_threads = True
        httpd.web = self  # type: ignore[attr-defined]
        if self.tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*self.tls)
            httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
        self._httpd = httpd
        self.port = httpd.server_address[1]
        threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.released.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://{host}:{self.port}{path}"

    def paths(self) -> list[str]:
        return [seen.path for seen in self.seen]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # the body ends when the connection closes

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        web: WebServer = self.server.web  # type: ignore[attr-defined]
        web.seen.append(Seen(self.path, self.headers.get("host", "")))
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        headers = {name.lower(): value for name, value in self.headers.items()}
        web.received.append(Received(self.command, self.path, headers, body))
        route = web.routes.get(self.path.split("?")[0])
        if route is None:
            route = Route(b"no such page", status=404, content_type="text/plain")
        self.send_response(route.status)
        if route.content_type is not None:
            self.send_header("Content-Type", route.content_type)
        for name, value in route.headers.items():
            self.send_header(name, value)
        self.end_headers()
        with contextlib.suppress(OSError):
            if route.stall_after is None:
                self.wfile.write(route.body)
                return
            self.wfile.write(route.body[: route.stall_after])
            self.wfile.flush()
            web.released.wait()
