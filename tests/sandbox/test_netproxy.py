"""caretz's proxy over real sockets: a loopback upstream, CONNECT and plain HTTP, refusals."""

from __future__ import annotations

import socket
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from caretz.sandbox.allowlist import build_allowlist
from caretz.sandbox.netgate import NetworkGate
from caretz.sandbox.netlisten import listener_on_host
from caretz.sandbox.netproxy import ProxyServer
from tests.sandbox.netservers import LoopbackServer, loopback_http


@pytest.fixture
def upstream() -> Iterator[LoopbackServer]:
    with loopback_http() as server:
        yield server


@pytest.fixture
def gate() -> NetworkGate:
    """allowed.test is pinned to the loopback; sneaky.test is listed but resolves there."""
    allowlist = build_allowlist(["allowed.test", "sneaky.test"], {"allowed.test": "127.0.0.1"})
    return NetworkGate(allowlist, lambda host, port: ["127.0.0.1"])


@pytest.fixture
def proxy(gate: NetworkGate) -> Iterator[ProxyServer]:
    server = ProxyServer(listener_on_host(), gate).start()
    yield server
    server.close()


def fetch(proxy: ProxyServer, url: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    address = f"http://127.0.0.1:{proxy.port}"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": address}))
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with opener.open(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def raw(proxy: ProxyServer, data: bytes) -> bytes:
    """Send `data` to the proxy and read until it closes."""
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as sock:
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        return b"".join(iter(lambda: sock.recv(65536), b""))


def test_a_plain_request_reaches_an_allowed_host_in_origin_form(proxy, upstream):
    url = f"http://allowed.test:{upstream.port}/simple/?q=1"
    headers = {"Proxy-Authorization": "Basic c2VjcmV0", "Host": "elsewhere.test"}

    status, body = fetch(proxy, url, headers)

    assert (status, body) == (200, f"hello from allowed.test:{upstream.port}\n")
    [seen] = upstream.seen
    assert seen.path == "/simple/?q=1"
    assert seen.headers["Host"] == f"allowed.test:{upstream.port}"  # the URL's, not the client's
    assert "Proxy-Authorization" not in seen.headers
    assert seen.headers["Connection"] == "close"


def test_connect_tunnels_bytes_to_an_allowed_host(proxy, upstream):
    request = (
        f"CONNECT allowed.test:{upstream.port} HTTP/1.1\r\nHost: allowed.test\r\n\r\n"
        f"GET /through HTTP/1.1\r\nHost: tunnelled.test\r\nConnection: close\r\n\r\n"
    )

    reply = raw(proxy, request.encode())

    assert reply.startswith(b"HTTP/1.1 200 Connection Established\r\n\r\nHTTP/1.0 200 OK")
    assert reply.endswith(b"hello from tunnelled.test\n")  # the tunnel's bytes, untouched
    assert [seen.path for seen in upstream.seen] == ["/through"]


def test_a_host_not_listed_gets_a_403_naming_it_and_nothing_reaches_anyone(proxy, upstream, gate):
    status, body = fetch(proxy, f"http://other.test:{upstream.port}/")
    tunnel = raw(proxy, f"CONNECT other.test:{upstream.port} HTTP/1.1\r\n\r\n".encode())

    assert status == 403
    assert body == (
        f"caretz refused a connection to other.test:{upstream.port}: not in the network "
        'allowlist. To allow it, add "other.test" to sandbox.network in profiles.json.\n'
    )
    assert tunnel.startswith(b"HTTP/1.1 403 Forbidden\r\n")
    assert upstream.seen == []
    assert [r.host for r in gate.take_refusals()] == ["other.test"]


def test_a_listed_name_resolving_to_the_loopback_is_refused(proxy, upstream):
    status, body = fetch(proxy, f"http://sneaky.test:{upstream.port}/")

    assert status == 403
    assert "it resolves to 127.0.0.1, which is not a public address" in body
    assert upstream.seen == []


@pytest.mark.parametrize(
    "request_line",
    [
        b"GET /relative HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
        b"GET https://allowed.test/ HTTP/1.1\r\n\r\n",
        b"CONNECT allowed.test HTTP/1.1\r\n\r\n",
        b"CONNECT user@allowed.test:80 HTTP/1.1\r\n\r\n",
        b"nonsense\r\n\r\n",
    ],
)
def test_what_the_proxy_does_not_serve_is_a_400(proxy, upstream, request_line):
    assert raw(proxy, request_line).startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert upstream.seen == []


def test_an_allowed_host_that_does_not_answer_is_a_502(proxy, gate):
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there now

    assert fetch(proxy, f"http://allowed.test:{port}/")[0] == 502


def test_closing_the_proxy_stops_it(gate):
    server = ProxyServer(listener_on_host(), gate).start()
    port = server.port

    server.close()

    assert not server._thread.is_alive()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=5)


@pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")
@pytest.mark.parametrize(
    "request_line",
    [
        "CONNECT allowed.test:²² HTTP/1.1\r\n\r\n",  # str.isdigit() says yes, int() says no
        "CONNECT allowed.test:٢٢ HTTP/1.1\r\n\r\n",  # int() reads Arabic-Indic digits as 22
        "CONNECT allowed.test:+80 HTTP/1.1\r\n\r\n",
        "CONNECT allowed.test:8_0 HTTP/1.1\r\n\r\n",
        "CONNECT allowed.test:0 HTTP/1.1\r\n\r\n",
        "CONNECT allowed.test:65536 HTTP/1.1\r\n\r\n",
        "CONNECT allowed.test:99999 HTTP/1.1\r\n\r\n",
        "CONNECT [::1:80 HTTP/1.1\r\n\r\n",
        "CONNECT bücher.test:80 HTTP/1.1\r\n\r\n",
        "CONNECT allowed\x7f.test:80 HTTP/1.1\r\n\r\n",
        "GET http://[::1/ HTTP/1.1\r\n\r\n",
        "GET http://allowed.test:²²/ HTTP/1.1\r\n\r\n",
    ],
)
def test_a_request_with_a_port_or_host_that_is_none_is_a_400_not_a_traceback(
    proxy, upstream, request_line
):
    # The proxy reads a head as latin-1, one character a byte: "²" is the byte 0xb2.
    encoding = "latin-1" if request_line.isascii() or max(request_line) <= "\xff" else "utf-8"
    reply = raw(proxy, request_line.encode(encoding))

    assert reply.startswith(b"HTTP/1.1 400 Bad Request\r\n"), reply
    assert upstream.seen == []
