"""Answers as the providers' HTTP reads them (h11 on a socket, caretz/providers/wire.py):
bodies framed by chunks, by length or by the connection's end; interim answers; headers;
an answer that breaks off, and one that is no HTTP. Each comes byte for byte from a
loopback server."""

from __future__ import annotations

import pytest

from caretz import inbound
from caretz.providers import wire
from tests.providers.raw_http import answering, client, fetch, read_request


def test_a_chunked_body_with_extensions_and_trailers_reads_whole_and_keeps_the_connection(
    serve,
):
    def handler(conn, requests):
        while read_request(conn, requests):
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                b"5;name=x\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n"
            )

    server = serve(handler)
    http = client()
    for _ in range(2):
        with http.stream("POST", server.url + "/x", b"{}", {}) as response:
            assert response.read() == b"hello world"

    assert server.connections == 1


def test_a_body_by_length_a_body_to_the_end_and_no_body(serve):
    by_length = serve(answering(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"))
    assert fetch(by_length.url).read() == b"abc"
    to_the_end = serve(answering(b"HTTP/1.0 200 OK\r\n\r\nall of it"))
    assert fetch(to_the_end.url).read() == b"all of it"
    empty = serve(answering(b"HTTP/1.1 204 No Content\r\n\r\n"))
    assert fetch(empty.url).read() == b""
    head = serve(answering(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n"))
    assert fetch(head.url, "HEAD").read() == b""


def test_interim_answers_are_skipped_and_headers_are_read_without_regard_to_case(serve):
    server = serve(
        answering(
            b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
            b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 2\r\nX-Tag: a\r\nx-tag: b\r\n"
            b"Connection: close\r\nContent-Length: 4\r\n\r\nslow"
        )
    )
    got = fetch(server.url)

    assert (got.status_code, got.reason_phrase, got.text) == (429, "Too Many Requests", "slow")
    assert got.headers.get("retry-after") == "2" and got.headers["RETRY-AFTER"] == "2"
    assert got.headers["x-tag"] == "a, b" and "X-TAG" in got.headers
    assert got.headers.get("link") is None


def test_an_answer_that_breaks_off_is_told_from_one_that_is_no_http(serve):
    for broken_off in (
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
    ):
        server = serve(answering(broken_off))
        with pytest.raises(wire.Broken, match="closed the connection mid-answer"):
            fetch(server.url)
    for no_http in (
        b"SSH-2.0-OpenSSH_9.6\r\n\r\n",
        b"HTTP/1.1 2000 OK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 3, 4\r\n\r\nabcd",
    ):
        server = serve(answering(no_http))
        with pytest.raises(wire.Broken, match="did not answer in HTTP"):
            fetch(server.url)


def test_json_and_text_of_an_answer(serve):
    server = serve(
        answering(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 27\r\n\r\n"
            b'{"n_ctx": 8192, "ok": true}'
        )
    )
    got = wire.get(server.url + "/props", 5)

    assert inbound.load_json(got.read()) == {"n_ctx": 8192, "ok": True}
    assert server.requests[0].startswith(b"GET /props HTTP/1.1\r\n")
