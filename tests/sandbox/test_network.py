"""A server on the host's loopback: unreachable with network off, reachable with it on."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from tests.sandbox.helpers import run_in

REPLY = b"hello-from-host"


@pytest.fixture
def loopback_server() -> Iterator[int]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with connection:
                connection.sendall(REPLY)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(2)
    server.close()


def _connect(port: int) -> str:
    return (
        "python3 -c \"import socket; s = socket.create_connection(('127.0.0.1', "
        f'{port}), timeout=5); print(s.recv(100).decode())"'
    )


def test_bwrap_network_off_refuses_the_host_loopback(make_policy, bwrap_sandbox, loopback_server):
    result = run_in(bwrap_sandbox(make_policy()), _connect(loopback_server))
    assert result.returncode != 0
    assert "Connection refused" in result.stderr
    assert REPLY.decode() not in result.stdout


def test_bwrap_network_off_keeps_its_own_loopback(make_policy, bwrap_sandbox):
    script = (
        "python3 -c \"import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen();"
        " c = socket.create_connection(s.getsockname()); print('own loopback works')\""
    )
    assert run_in(bwrap_sandbox(make_policy()), script).stdout.strip() == "own loopback works"


def test_bwrap_network_on_reaches_the_host(make_policy, bwrap_sandbox, loopback_server):
    result = run_in(bwrap_sandbox(make_policy(network=True)), _connect(loopback_server))
    assert result.stdout.strip() == REPLY.decode(), result.stderr


def test_landlock_network_off_refuses_tcp(make_policy, landlock_sandbox, loopback_server):
    result = run_in(landlock_sandbox(make_policy()), _connect(loopback_server))
    assert result.returncode != 0
    assert "Permission denied" in result.stderr
    assert REPLY.decode() not in result.stdout


def test_landlock_network_on_reaches_the_host(make_policy, landlock_sandbox, loopback_server):
    result = run_in(landlock_sandbox(make_policy(network=True)), _connect(loopback_server))
    assert result.stdout.strip() == REPLY.decode(), result.stderr
