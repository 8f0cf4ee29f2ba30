"""The network allowlist inside the real sandbox: curl through caretz's proxy under
bubblewrap (the proxy listening inside the session's namespace) and under Landlock (on the
host's loopback, the only port a command may connect to)."""

from __future__ import annotations

import dataclasses
import socket
from collections.abc import Iterator

import pytest

from caretz.sandbox.allowlist import build_allowlist
from caretz.sandbox.runner import Sandbox
from tests.sandbox.helpers import run_in
from tests.sandbox.netservers import LoopbackServer, loopback_http

AF_UNIX = (
    "python3 -c \"import socket; socket.socket(socket.AF_UNIX); print('made')\" 2>&1 | tail -1"
)


@pytest.fixture
def upstream() -> Iterator[LoopbackServer]:
    with loopback_http() as server:
        yield server


@pytest.fixture
def allowing(make_policy):
    """A policy whose allowlist names allowed.test, pinned to the host's loopback."""
    allowlist = build_allowlist(["allowed.test"], {"allowed.test": "127.0.0.1"})
    return make_policy(allowlist=allowlist)


@pytest.fixture(params=["bwrap", "landlock"])
def sandbox(request, allowing, bwrap_sandbox, landlock_sandbox) -> Iterator[Sandbox]:
    opened = bwrap_sandbox(allowing) if request.param == "bwrap" else landlock_sandbox(allowing)
    yield opened
    opened.close()


def test_an_allowed_name_is_reached_by_plain_http_and_connect(sandbox, upstream):
    url = f"http://allowed.test:{upstream.port}"
    result = run_in(sandbox, f"curl -sS {url}/plain && curl -sS --proxytunnel {url}/tunnel")

    assert result.stdout == f"hello from allowed.test:{upstream.port}\n" * 2, result.stderr
    assert [seen.path for seen in upstream.seen] == ["/plain", "/tunnel"]
    assert sandbox.network_lines() == []


def test_another_name_is_refused_and_the_refusal_is_told(sandbox, upstream):
    result = run_in(sandbox, f"curl -sS http://other.test:{upstream.port}/")

    refusal = (
        f"caretz refused a connection to other.test:{upstream.port}: not in the network "
        'allowlist. To allow it, add "other.test" to sandbox.network in profiles.json.'
    )
    assert result.stdout.strip() == refusal
    assert sandbox.network_lines() == [f"[network] {refusal}"]
    assert upstream.seen == []


def test_nothing_gets_past_the_proxy(sandbox, upstream):
    direct = f"curl -sS --noproxy '*' --max-time 10 http://127.0.0.1:{upstream.port}/; echo exit=$?"

    result = run_in(sandbox, direct)

    assert "exit=7" in result.stdout, result.stdout + result.stderr  # could not connect
    assert upstream.seen == []
    assert (
        run_in(sandbox, AF_UNIX)
        .stdout.strip()
        .endswith("PermissionError: [Errno 13] Permission denied")
    )


def test_without_the_shared_namespace_commands_have_no_network(allowing, bwrap_sandbox, upstream):
    opened = dataclasses.replace(bwrap_sandbox(allowing), nsenter_path=None)
    try:
        result = run_in(opened, f"curl -sS --max-time 10 http://allowed.test:{upstream.port}/")

        assert result.returncode != 0 and upstream.seen == []
        assert "HTTP_PROXY" not in run_in(opened, "env").stdout
        assert opened.network_lines() == [
            "[network] the network allowlist needs nsenter (util-linux); commands have no network"
        ]
    finally:
        opened.close()


def test_the_proxy_ends_with_the_session_and_with_the_allowlist(allowing, landlock_sandbox):
    opened = landlock_sandbox(allowing)
    port = int(run_in(opened, "echo ${HTTP_PROXY##*:}").stdout)
    socket.create_connection(("127.0.0.1", port), timeout=5).close()  # listening

    off = dataclasses.replace(opened, policy=dataclasses.replace(allowing, allowlist=None))
    assert "HTTP_PROXY" not in run_in(off, "env").stdout
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5)

    port = int(run_in(opened, "echo ${HTTP_PROXY##*:}").stdout)  # back on, on a new port
    opened.close()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5)
