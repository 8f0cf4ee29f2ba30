"""Loopback servers for the network allowlist's tests: an HTTP server that records what it
was asked, and a simple package index serving one wheel the test builds."""

from __future__ import annotations

import base64
import hashlib
import http.server
import io
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Seen:
    """What one request looked like when it reached the server."""

    method: str
    path: str
    headers: dict[str, str]


@dataclass
class LoopbackServer:
    port: int
    seen: list[Seen] = field(default_factory=list)
    files: dict[str, tuple[str, bytes]] = field(default_factory=dict)  # path → (type, body)


def _handler(server: LoopbackServer) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
            server.seen.append(Seen("GET", self.path, dict(self.headers.items())))
            kind, body = server.files.get(self.path.split("?")[0], ("text/plain", b""))
            if not body:
                kind, body = "text/plain", f"hello from {self.headers['Host']}\n".encode()
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


@contextmanager
def loopback_http() -> Iterator[LoopbackServer]:
    """An HTTP server on 127.0.0.1 (a port the kernel picks), answering every GET."""
    state = LoopbackServer(0)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    httpd.daemon_threads = True
    state.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def tiny_wheel(name: str, version: str) -> tuple[str, bytes]:
    """A pure-Python wheel with one module, built in memory: (file name, bytes)."""
    dist = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": b"VALUE = 42\n",
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: caretz-tests\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    record = [f"{path},sha256={_digest(body)},{len(body)}" for path, body in files.items()]
    files[f"{dist}/RECORD"] = ("\n".join([*record, f"{dist}/RECORD,,"]) + "\n").encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, body in files.items():
            archive.writestr(path, body)
    return f"{name}-{version}-py3-none-any.whl", buffer.getvalue()


def serve_index(server: LoopbackServer, name: str, version: str) -> str:
    """Put a simple index (PEP 503) with one wheel on `server`; the wheel's file name."""
    wheel, body = tiny_wheel(name, version)
    sha = hashlib.sha256(body).hexdigest()
    page = f'<a href="/files/{wheel}#sha256={sha}">{wheel}</a>\n'.encode()
    server.files[f"/simple/{name}/"] = ("text/html", page)
    server.files[f"/files/{wheel}"] = ("application/octet-stream", body)
    return wheel


def _digest(body: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b"=").decode()
