"""Real MCP servers for the tests: the PyPI reference server `mcp-server-time`, and
tests/mcp/servers/trouble.py (written with the SDK) for the error cases."""

from __future__ import annotations

import os
import select
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import caretz, workspace  # noqa: F401 (the real CLI's fixtures)
from tests.e2e.terminal import terminal  # noqa: F401 (the pseudo-terminal fixture)
from tests.processes import live_command_lines
from tests.tools.test_bash import process_running

TROUBLE = Path(__file__).parent / "servers" / "trouble.py"


# A real server's start-up is as slow as the machine: on two busy cores servers took 26-29 s
# to start. Every test server's entry waits as long as that takes; a test of the timeout
# itself sets its own.
STARTUP_ROOM = "10m"
# How long a test waits for what it waits on (a file, a process's end) before it fails:
# only a failing test waits this long, so it is far above what any machine needs.
BOUND_S = 300.0


def time_server() -> dict[str, Any]:
    """`mcp-server-time` over stdio, as an mcpServers entry."""
    return {
        "command": sys.executable,
        "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
        "startupTimeout": STARTUP_ROOM,
    }


def trouble_server(
    *args: str, env: dict[str, str] | None = None, startup: str | None = STARTUP_ROOM
) -> dict[str, Any]:
    """tests/mcp/servers/trouble.py as an mcpServers entry; `startup`: its own
    startupTimeout (None: the profile's `mcp.startupTimeout`)."""
    entry: dict[str, Any] = {"command": sys.executable, "args": [str(TROUBLE), *args]}
    if startup is not None:
        entry["startupTimeout"] = startup
    if env:
        entry["env"] = env
    return entry


def within(check: Callable[[], bool], within_s: float) -> bool:
    """Whether `check()` holds within `within_s`, polled."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False


def wait_gone(pid: int, within_s: float = BOUND_S) -> bool:
    """Whether process `pid` ends within `within_s`: woken by its end (a pidfd), not a poll."""
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        readable, _, _ = select.select([handle], [], [], within_s)
    finally:
        os.close(handle)
    return bool(readable) or not process_running(pid)


def processes_mentioning(text: str) -> list[int]:
    """The live processes whose command line holds `text` (zombies left out)."""
    return [
        pid
        for pid, cmdline in live_command_lines()
        if text in cmdline.replace(b"\0", b" ").decode(errors="replace")
    ]


def wait_none_mentioning(text: str, within_s: float = BOUND_S) -> bool:
    """Whether every process whose command line holds `text` is gone within `within_s`:
    it holds whether the process had got as far as writing anything or not."""
    return within(lambda: not processes_mentioning(text), within_s)


def wait_for_file(path: Path, within_s: float = BOUND_S) -> str:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        time.sleep(0.05)
    raise AssertionError(f"{path} was never written")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(params=["http", "sse"])
def http_trouble(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """trouble.py over streamable HTTP (or SSE) on a free loopback port; yields the
    transport and the URL."""
    port = free_port()
    sse = ["--sse"] if request.param == "sse" else []
    process = subprocess.Popen(
        [sys.executable, str(TROUBLE), "--http", str(port), *sse],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + BOUND_S
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        else:
            raise AssertionError("the HTTP MCP server never listened")
        yield request.param, f"http://127.0.0.1:{port}/{'sse' if sse else 'mcp'}"
    finally:
        process.terminate()
        process.wait(timeout=BOUND_S)
