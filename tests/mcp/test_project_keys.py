"""caretz's own keys never expand into a project's `.mcp.json`, approved or not, through the
real CLI: a loopback HTTP MCP server (tests/mcp/servers/trouble.py) writes down every
request's headers; the project's server asks for caretz's key, another provider's key, a
token and a plain variable, and the user's own profile server for caretz's key."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import API_KEY, Caretz
from tests.mcp.conftest import BOUND_S, TROUBLE, free_port, within
from tests.modelserver import ModelServer, calls, text

OPENAI_KEY = "sk-proj-" + "o" * 40
GITHUB_TOKEN = "ghp_" + "g" * 36
SECRETS = (API_KEY, OPENAI_KEY, GITHUB_TOKEN)


@pytest.fixture
def recorder(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """trouble.py over streamable HTTP on a free loopback port, writing down headers; yields
    its URL and the file."""
    port, record = free_port(), tmp_path / "headers.jsonl"
    process = subprocess.Popen(
        [sys.executable, str(TROUBLE), "--http", str(port), "--record-headers", str(record)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert within(lambda: _listening(port), BOUND_S), "the HTTP MCP server never listened"
        yield f"http://127.0.0.1:{port}/mcp", record
    finally:
        process.terminate()
        process.wait(timeout=BOUND_S)


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def headers_of(record: Path, who: str) -> list[dict[str, str]]:
    lines = record.read_text().splitlines() if record.exists() else []
    found = [json.loads(line)["headers"] for line in lines]
    return [headers for headers in found if headers.get("x-who") == who]


def test_a_project_server_never_sends_caretz_keys_but_the_users_own_server_may(
    caretz: Caretz, server: ModelServer, workspace: Path, recorder: tuple[str, Path]
):
    url, record = recorder
    project = {
        "type": "http",
        "url": url,
        "headers": {
            "X-Who": "project",
            "Authorization": "Bearer ${ANTHROPIC_API_KEY}",
            "X-Other": "${OPENAI_API_KEY:-none}",
            "X-Token": "token=${GITHUB_TOKEN}",
            "X-Team": "${CARETZ_TEST_TEAM}",
        },
        "startupTimeout": "10m",
    }
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"docs": project}}))
    mine = {"type": "http", "url": url, "startupTimeout": "10m"}
    mine["headers"] = {"X-Who": "profile", "Authorization": "Bearer ${ANTHROPIC_API_KEY}"}
    caretz.write_config({"profiles": {"general": {"mcpServers": {"mine": mine}}}})
    env = {"OPENAI_API_KEY": OPENAI_KEY, "GITHUB_TOKEN": GITHUB_TOKEN, "CARETZ_TEST_TEAM": "blue"}

    approved = caretz("mcp", "approve", "docs", env=env)

    assert approved.code == 0, approved.stderr
    shown = approved.stdout.splitlines()
    key_line = "caretz's own key or a secret: it expands to nothing in a project's configuration"
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GITHUB_TOKEN"):
        assert f"  ${{{name}}}: {key_line}" in shown
    assert "  ${CARETZ_TEST_TEAM}: from your environment" in shown
    assert f"  header Authorization: Bearer ${{ANTHROPIC_API_KEY}} (sent to {url})" in shown
    assert not any(secret in approved.stdout for secret in SECRETS)

    # Each call waits for its server (the run does not otherwise): both have connected.
    server.add(calls(("mcp__docs__echo", {"text": "a"}), ("mcp__mine__echo", {"text": "b"})))
    server.add(text("Hello."))
    run = caretz("-p", "hello", env=env)

    assert run.code == 0, run.stderr
    sent = headers_of(record, "project")
    assert sent, run.stderr
    for headers in sent:
        assert headers["authorization"].strip() == "Bearer"
        assert headers["x-other"] == "none"  # the key is empty, so its default
        assert headers["x-token"] == "token="
        assert headers["x-team"] == "blue"  # a variable that is no key expands
        assert not any(secret in value for value in headers.values() for secret in SECRETS)
    own = headers_of(record, "profile")
    assert own and all(h["authorization"] == f"Bearer {API_KEY}" for h in own)
    assert not any(secret in run.stderr + run.stdout for secret in SECRETS)
