"""--allowed-tools and --disallowed-tools: permission rules for one run, in Claude Code's
--allowedTools forms; and the headless result saying how to allow what it denied. The real
CLI, the loopback model server, the real `mcp-server-time` and real bash."""

from __future__ import annotations

import json
from typing import Any

from tests.e2e.conftest import Caretz
from tests.mcp.conftest import time_server
from tests.modelserver import ModelServer, RecordedRequest, text, tool

TIME_TOOL = "mcp__time__get_current_time"


def with_time_server() -> dict[str, Any]:
    return {"profiles": {"general": {"mcpServers": {"time": time_server()}}}}


def tool_result(request: RecordedRequest) -> dict[str, Any]:
    [block] = [b for b in request.messages[-1]["content"] if b.get("type") == "tool_result"]
    return block


def result_text(block: dict[str, Any]) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def test_a_denied_mcp_call_says_how_to_allow_it_and_allowed_tools_lets_it_run(
    caretz: Caretz, server: ModelServer
):
    caretz.write_config(with_time_server())
    server.add(tool(TIME_TOOL, timezone="UTC"), text("I could not."))

    denied = caretz("-p", "what time is it?")

    assert denied.code == 0, denied.stderr
    assert tool_result(server.requests[1]).get("is_error")
    hints = [line for line in denied.stderr.splitlines() if "--allowed-tools" in line]
    assert hints == [
        f"denied for want of someone to ask: allow it for a run with --allowed-tools {TIME_TOOL}"
        ", or for good under permissions.allow (profiles.json or .caretz/settings.json)"
    ]

    server.add(tool(TIME_TOOL, timezone="UTC"), text("It is late."))
    allowed = caretz("-p", "what time is it?", "--allowedTools", f"Bash(git log:*),{TIME_TOOL}")

    assert allowed.code == 0, allowed.stderr
    block = tool_result(server.requests[3])
    assert not block.get("is_error"), block
    assert json.loads(result_text(block))["timezone"] == "UTC"
    assert "--allowed-tools" not in allowed.stderr


def test_the_json_result_lists_the_rule_that_would_allow_a_denied_call(
    caretz: Caretz, server: ModelServer
):
    caretz.write_config(with_time_server())
    server.add(tool(TIME_TOOL, timezone="UTC"), text("I could not."))

    run = caretz("-p", "what time is it?", "--output", "json")

    result = json.loads(run.stdout.splitlines()[-1])
    assert [d["allow_rules"] for d in result["permission_denials"]] == [[TIME_TOOL]]
    assert f"--allowed-tools {TIME_TOOL}" in result["permission_hint"]


def test_disallowed_tools_refuse_for_this_run_only(caretz: Caretz, server: ModelServer, workspace):
    server.add(tool("bash", command="echo hi > made.txt"), text("Refused."))
    server.add(tool("bash", command="echo hi > made.txt"), text("Made."))

    refused = caretz("-p", "make it", "--disallowed-tools", "Bash(echo:*) Write")
    assert refused.code == 0, refused.stderr
    assert tool_result(server.requests[1]).get("is_error")
    assert not (workspace / "made.txt").exists()
    assert "--allowed-tools" not in refused.stderr  # a deny rule is no question nobody answered

    again = caretz("-p", "make it")

    assert again.code == 0, again.stderr
    assert (workspace / "made.txt").read_text() == "hi\n"


def test_a_rule_the_flag_cannot_read_is_one_line_naming_the_flag(caretz: Caretz, server):
    run = caretz("-p", "hello", "--allowed-tools", "Bash(unclosed")

    assert run.code == 2
    assert run.stderr.startswith("caretz: --allowed-tools")
    assert len(run.stderr.splitlines()) == 1
    assert server.requests == []
