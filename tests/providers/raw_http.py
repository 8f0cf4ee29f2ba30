"""Loopback servers that speak HTTP by hand, byte for byte, for the tests of the
providers' HTTP (caretz/providers/wire.py): whatever a handler writes is what the client
reads, broken answers included."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable

from caretz.providers import wire

Handler = Callable[[socket.socket, list[bytes]], None]


class RawServer:
    """A loopback server whose every connection is handled by `serve(conn, requests)`;
    `requests` keeps each request's head as received."""

    def __init__(self, serve: Handler):
        self.requests: list[bytes] = []
        self.connections = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._serve = serve
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        try:
            self._serve(conn, self.requests)
        except OSError:
            pass  # the client went away
        finally:
            conn.close()

    def close(self) -> None:
        self._listener.close()


def read_request(conn: socket.socket, requests: list[bytes]) -> bool:
    """Read one request (head and Content-Length body); False at the end of the stream."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return False
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")),
        0,
    )  # fmt: skip
    while len(body) < length:
        body += conn.recv(65536)
    requests.append(head)
    return True


def answering(*answers: bytes) -> Handler:
    """A handler that reads a request and writes the next of `answers`, then closes."""
    left = list(answers)

    def handler(conn: socket.socket, requests: list[bytes]) -> None:
        read_request(conn, requests)
        conn.sendall(left.pop(0))

    return handler


def client(**options: object) -> wire.Client:
    return wire.Client(connect_s=5, read_s=5, trust_env=False, **options)  # type: ignore[arg-type]


def fetch(url: str, method: str = "POST") -> wire.Response:
    """One request's answer, read whole."""
    with client().stream(method, url, b"{}" if method == "POST" else None, {}) as response:
        response.read()
        return response
