"""The providers' HTTP (caretz/providers/wire.py) through the environment's proxies and
against certificates: a plain-HTTP request forwarded whole, an https one through a
CONNECT tunnel, NO_PROXY, a refused tunnel, and the CA bundle SSL_CERT_FILE names."""

from __future__ import annotations

import contextlib
import shutil
import socket
import ssl
import subprocess
import threading
from pathlib import Path

import pytest

from caretz.providers import connection, wire
from tests.providers.raw_http import answering, read_request

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@pytest.fixture(autouse=True)
def no_proxy_yet(monkeypatch):
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.setattr(connection, "_tls", None)  # each test's own CA bundle


def test_a_plain_http_request_goes_through_the_proxy_whole_unless_no_proxy(serve, monkeypatch):
    relay = serve(answering(b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nproxied"))
    origin = serve(answering(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\ndirect"))
    monkeypatch.setenv("HTTP_PROXY", f"http://user:pa%20ss@127.0.0.1:{relay.port}")
    http = wire.Client(connect_s=5, read_s=5)

    with http.stream("POST", "http://model.invalid:8080/v1/messages", b"{}", {}) as response:
        assert response.read() == b"proxied"
    head = relay.requests[0].decode()
    assert head.startswith("POST http://model.invalid:8080/v1/messages HTTP/1.1")
    assert "Host: model.invalid:8080" in head
    assert "Proxy-Authorization: Basic dXNlcjpwYSBzcw==" in head  # user:pa ss

    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with http.stream("POST", origin.url + "/v1/messages", b"{}", {}) as response:
        assert response.read() == b"direct"
    assert origin.requests[0].startswith(b"POST /v1/messages HTTP/1.1")
    assert len(relay.requests) == 1


def test_only_an_http_proxy_is_used(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "socks5://127.0.0.1:1080")
    with pytest.raises(wire.BadURL, match="only http:// proxies"):
        wire.Client(connect_s=5, read_s=5).stream("GET", "https://x.invalid/", None, {}).__enter__()


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.fail("openssl is not installed; the https tests make their certificate with it")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def tls_answering(cert: Path, key: Path, body: bytes):
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)

    def handler(conn, requests):
        try:
            with context.wrap_socket(conn, server_side=True) as tls:
                read_request(tls, requests)
                tls.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        except (ssl.SSLError, OSError):
            pass  # the client refused the certificate

    return handler


def test_https_checks_the_certificate_against_ssl_cert_file(serve, certificate, monkeypatch):
    server = serve(tls_answering(*certificate, b"secure"))
    url = f"https://127.0.0.1:{server.port}/x"
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    with pytest.raises(wire.ConnectFailed, match="CERTIFICATE_VERIFY_FAILED"):
        wire.Client(connect_s=5, read_s=5).stream("GET", url, None, {}).__enter__()

    monkeypatch.setattr(connection, "_tls", None)
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
    with wire.Client(connect_s=5, read_s=5).stream("GET", url, None, {}) as response:
        assert response.read() == b"secure"


def pump(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


def tunnel_to(port: int):
    """A proxy that answers CONNECT with a tunnel to 127.0.0.1:`port`."""

    def handler(conn, requests):
        read_request(conn, requests)
        with socket.create_connection(("127.0.0.1", port)) as upstream:
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            back = threading.Thread(target=pump, args=(upstream, conn))
            back.start()
            pump(conn, upstream)
            back.join(timeout=10)

    return handler


def test_https_goes_through_the_proxy_s_tunnel(serve, certificate, monkeypatch):
    origin = serve(tls_answering(*certificate, b"tunneled"))
    proxy = serve(tunnel_to(origin.port))
    monkeypatch.setenv("HTTPS_PROXY", f"127.0.0.1:{proxy.port}")  # no scheme: http://
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
    http = wire.Client(connect_s=5, read_s=5)

    with http.stream("POST", f"https://localhost:{origin.port}/v1/x", b"{}", {}) as response:
        assert response.read() == b"tunneled"

    assert proxy.requests[0].split(b"\r\n")[:2] == [
        b"CONNECT localhost:%d HTTP/1.1" % origin.port,
        b"Host: localhost:%d" % origin.port,
    ]
    assert origin.requests[0].startswith(b"POST /v1/x HTTP/1.1\r\nHost: localhost:")


def test_a_refused_tunnel_is_a_failed_connection(serve, monkeypatch):
    proxy = serve(
        answering(b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
    )
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{proxy.port}")

    with pytest.raises(wire.ConnectFailed, match="refused the tunnel: 407"):
        wire.Client(connect_s=5, read_s=5).stream("GET", "https://x.invalid/", None, {}).__enter__()
