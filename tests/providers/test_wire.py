"""The providers' HTTP client (caretz/providers/wire.py) against real sockets: lines as
they arrive, kept connections and stale ones, threads sending at once, timeouts, and
errors that never quote a header."""

from __future__ import annotations

import socket
import threading

import pytest

from caretz.providers import wire
from tests.providers.raw_http import client, read_request

OK_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"


def test_lines_end_at_lf_crlf_or_cr_even_split_between_reads(serve):
    def handler(conn, requests):
        read_request(conn, requests)
        conn.sendall(OK_HEAD + b"Connection: close\r\n\r\n")
        for piece in (
            b"data: one\r",
            b"\ndata: tw",
            b"o\n\nevent: x\rdata: \xc3",
            b"\xa9\r\n",
            b"tail",
        ):
            conn.sendall(piece)
            threading.Event().wait(0.05)  # each piece its own read (the lines are the same)

    server = serve(handler)
    with client().stream("POST", server.url + "/v1/messages", b"{}", {}) as response:
        lines = list(response.iter_lines())

    assert lines == ["data: one", "data: two", "", "event: x", "data: é", "tail"]


def test_a_request_goes_out_as_written(serve):
    server = serve(lambda conn, requests: read_request(conn, requests))
    with pytest.raises(wire.Broken):
        client().stream(
            "POST", server.url + "/v1/messages?beta=true", b"{}", {"x-a": "b"}
        ).__enter__()

    head = server.requests[0].decode()
    assert head.split("\r\n") == [
        "POST /v1/messages?beta=true HTTP/1.1",
        f"Host: 127.0.0.1:{server.port}",
        "x-a: b",
        "Content-Length: 2",
    ]


def test_a_read_answer_keeps_its_connection_and_a_stale_one_is_replaced(serve):
    def handler(conn, requests):
        while read_request(conn, requests):
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            if len(requests) == 2:
                return  # the server drops the idle connection after the second answer

    server = serve(handler)
    http = client()
    for _ in range(3):
        with http.stream("POST", server.url + "/x", b"{}", {}) as response:
            assert response.read() == b"ok"

    assert len(server.requests) == 3
    assert server.connections == 2  # one kept for two answers, then a fresh one


def test_a_kept_connection_closed_instead_of_answering_is_replaced(serve):
    def handler(conn, requests):
        while read_request(conn, requests):
            if len(requests) == 2:
                return  # the second request, on the kept connection: closed unanswered
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")

    server = serve(handler)
    http = client()
    for _ in range(2):
        with http.stream("POST", server.url + "/x", b"{}", {}) as response:
            assert response.read() == b"ok"

    assert len(server.requests) == 3  # the second request, sent again on a fresh connection
    assert server.connections == 2


def test_a_fresh_connection_closed_unanswered_is_broken(serve):
    server = serve(lambda conn, requests: read_request(conn, requests))
    with pytest.raises(wire.Broken, match="closed the connection before answering"):
        client().stream("POST", server.url + "/x", b"{}", {}).__enter__()
    assert server.connections == 1  # not sent again: nothing was kept


def test_an_answer_left_unread_or_closing_closes_its_connection(serve):
    def handler(conn, requests):
        while read_request(conn, requests):
            close = b"Connection: close\r\n" if len(requests) == 2 else b""
            conn.sendall(b"HTTP/1.1 200 OK\r\n%sContent-Length: 5\r\n\r\nhello" % close)

    server = serve(handler)
    http = client()
    with http.stream("POST", server.url + "/x", b"{}", {}):
        pass  # closed early, as a guard's cut does
    with http.stream("POST", server.url + "/x", b"{}", {}) as response:
        assert response.read() == b"hello"
    with http.stream("POST", server.url + "/x", b"{}", {}) as response:
        assert response.read() == b"hello"

    assert server.connections == 3


def test_requests_from_several_threads_at_once_each_get_their_own_answer(serve):
    both_in = threading.Barrier(2, timeout=10)

    def handler(conn, requests):
        own: list[bytes] = []
        while read_request(conn, own):
            requests.append(own[-1])
            both_in.wait()  # no answer before both requests are in flight
            name = own[-1].split(b" ")[1]
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(name), name))

    server = serve(handler)
    http = client()
    answers: dict[str, bytes] = {}

    def ask(path: str) -> None:
        with http.stream("GET", server.url + path, None, {}) as response:
            answers[path] = response.read()

    threads = [threading.Thread(target=ask, args=(path,)) for path in ("/one", "/two")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)

    assert answers == {"/one": b"/one", "/two": b"/two"}
    assert server.connections == 2


def test_a_header_http_cannot_carry_is_refused_without_quoting_it(serve):
    server = serve(lambda conn, requests: read_request(conn, requests))
    secret = "sk-ant-curly\u2019quote"

    for value in (secret, secret + "\r\nInjected: yes"):
        with pytest.raises(wire.BadHeader) as raised:
            client().stream("POST", server.url + "/x", b"{}", {"x-api-key": value}).__enter__()
        assert secret not in str(raised.value)
    with pytest.raises(wire.BadURL):
        client().stream("GET", server.url + "/a b", None, {}).__enter__()
    assert server.connections == 0  # refused before connecting


def test_refused_and_timed_out_are_told_apart(serve):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(wire.ConnectFailed, match="Connection refused"):
        client().stream("GET", f"http://127.0.0.1:{port}/", None, {}).__enter__()

    done = threading.Event()

    def silent(conn, requests):
        read_request(conn, requests)
        done.wait(30)  # no answer until the client has given up

    server = serve(silent)
    quick = wire.Client(connect_s=5, read_s=0.2, trust_env=False)
    try:
        with pytest.raises(wire.TimedOut) as raised:
            quick.stream("GET", server.url + "/", None, {}).__enter__()
    finally:
        done.set()
    assert raised.value.answering and not raised.value.reading  # no answer began


def test_a_stream_that_goes_quiet_times_out_reading(serve):
    done = threading.Event()

    def stalls(conn, requests):
        read_request(conn, requests)
        conn.sendall(OK_HEAD + b"Transfer-Encoding: chunked\r\n\r\n5\r\ndata:\r\n")
        done.wait(30)

    server = serve(stalls)
    quick = wire.Client(connect_s=5, read_s=0.2, trust_env=False)
    try:
        with quick.stream("POST", server.url + "/", b"{}", {}) as response:
            lines = response.iter_lines()
            with pytest.raises(wire.TimedOut) as raised:
                next(lines)
    finally:
        done.set()
    assert raised.value.reading


def test_each_new_socket_is_handed_over_and_shutting_it_down_ends_a_wait(serve):
    done = threading.Event()

    def stalls(conn, requests):
        read_request(conn, requests)
        done.wait(30)  # never answers

    def abort(sock: socket.socket) -> None:  # as a provider's abort does, from another thread
        sockets.append(sock)
        threading.Thread(target=sock.shutdown, args=(socket.SHUT_RDWR,)).start()

    server = serve(stalls)
    sockets: list[socket.socket] = []
    try:
        with pytest.raises(wire.Broken):
            client(on_socket=abort).stream("POST", server.url + "/", b"{}", {}).__enter__()
    finally:
        done.set()
    assert len(sockets) == 1
