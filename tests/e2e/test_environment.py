"""What the first request tells the model about its environment, through the real CLI:
the system prompt in each mode, read-only's tool list, yolo's descriptions."""

from __future__ import annotations

import subprocess
from typing import Any

from tests.e2e.conftest import Caretz
from tests.modelserver import ModelServer, text


def first_request(caretz: Caretz, server: ModelServer, *args: str) -> Any:
    server.add(text("ok"))
    run = caretz("-p", "hi", *args)
    assert run.code == 0, run.stderr
    return server.requests[0]


def descriptions(request: Any) -> str:
    tools = request.body["tools"]
    return " ".join(
        tool["description"]
        + " "
        + " ".join(p["description"] for p in tool["input_schema"]["properties"].values())
        for tool in tools
    )


def test_auto_mode_tells_the_sandbox_the_mode_git_and_what_persists(caretz, server, workspace):
    subprocess.run(["git", "init", "-q", "-b", "trunk"], cwd=workspace, check=True)
    (workspace / "notes.txt").write_text("x\n")

    request = first_request(caretz, server)

    system = request.system
    assert "- git: trunk; 1 changed: ?? notes.txt" in system
    assert (
        f"- sandbox: bubblewrap; network off (no Unix sockets either); writable: {workspace.resolve()}"
        in system
    )
    assert "- permissions: auto mode:" in system and "escalate" in system
    assert "- run: headless (-p): nobody answers questions" in system
    assert (
        "one network namespace (a server a job starts answers on localhost) and one private /tmp"
        in system
    )
    assert "the working directory carries over between bash commands" in system
    assert {"bash", "read", "write", "edit", "glob", "grep"} <= set(request.tool_names)


def test_read_only_mode_offers_no_tool_that_changes_files(caretz, server):
    request = first_request(caretz, server, "--permission-mode", "read-only")

    assert "write" not in request.tool_names and "edit" not in request.tool_names
    assert {"bash", "read", "glob", "grep", "todo"} <= set(request.tool_names)
    assert "- permissions: read-only mode: no file changes" in request.system
    assert "writable: nothing (read-only)" in request.system


def test_yolo_promises_no_sandbox_anywhere(caretz, server):
    request = first_request(caretz, server, "--permission-mode", "yolo")

    said = descriptions(request)
    assert "run in a sandbox" not in said and "the sandbox" not in said
    assert "Commands run without a sandbox, with the user's rights and network." in said
    assert "escalate" not in request.body["tools"][0]["input_schema"]["properties"]
    assert "- sandbox: off; commands run on the host" in request.system
    assert "- permissions: yolo mode: nothing asks first" in request.system
    assert "private /tmp" not in request.system
