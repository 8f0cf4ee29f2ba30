"""MCP servers in the interactive session: `/mcp`, `/mcp approve`, and "yes, always" for
an MCP tool, in a real pseudo-terminal against real servers."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import Caretz
from tests.mcp.conftest import time_server, trouble_server
from tests.modelserver import ModelServer, calls, text, tool

STYLE = r"(?:\x1b\[[0-9;]*m)*"  # colour codes between words


def test_slash_mcp_shows_the_servers_their_status_and_tools(caretz: Caretz, terminal):
    caretz.write_config(
        {"profiles": {"general": {"mcpServers": {
            "time": time_server(), "gone": {"command": "caretz-no-such-server"}}}}}
    )  # fmt: skip
    term = terminal()

    # Both start behind the prompt, and settle in either order.
    lines = [
        "mcp: server 'gone' did not start: command not found: caretz-no-such-server",
        "mcp: server 'time' ready",
    ]
    seen = {term.child.expect_exact(lines), term.child.expect_exact(lines)}
    assert seen == {0, 1}
    term.type("/mcp")
    term.expect(f"time{STYLE}  ready · stdio")
    term.expect(f"mcp__time__get_current_time{STYLE}  Get current time in a specific timezone")
    term.expect(f"gone{STYLE}  failed · stdio · caretz-no-such-server")
    term.ctrl_d()


def test_slash_mcp_approve_starts_a_project_server_whose_tools_the_model_then_uses(
    caretz: Caretz, server: ModelServer, workspace: Path, terminal
):
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"trouble": trouble_server()}}))
    caretz.write_config({"profiles": {"general": {"permissions": {"allow": ["mcp__trouble__*"]}}}})
    server.add(calls(("mcp__trouble__echo", {"text": "hi"})), text("It answered."))
    term = terminal()

    term.expect(r"trust this project's configuration\? \(y/N\)")
    term.child.send("n\r")  # not the whole: the server alone, below
    term.expect("not started until you approve it")
    term.type("/mcp approve trouble")
    term.expect("trouble: approved and started, 12 tools")
    term.type("try the trouble server")
    term.expect("It answered.")
    term.ctrl_d()

    offered = [spec["name"] for spec in server.requests[0].body["tools"]]
    assert "mcp__trouble__echo" in offered
    [result] = [b for b in server.requests[1].messages[-1]["content"] if b["type"] == "tool_result"]
    assert result["content"] == "echo: hi"


def test_yes_always_saves_the_mcp_tool_rule_and_the_next_call_runs_unasked(
    caretz: Caretz, server: ModelServer, workspace: Path, terminal
):
    caretz.write_config({"profiles": {"general": {"mcpServers": {"time": time_server()}}}})
    call = tool("mcp__time__get_current_time", timezone="UTC")
    server.add(call, call, text("Twice."))
    term = terminal()

    term.type("what time is it, twice?")
    term.expect(f"caretz asks before it runs {STYLE}mcp__time__get_current_time")
    term.expect(f"why: {STYLE}mcp__time__get_current_time runs outside the sandbox")
    term.expect(r"yes, always: saves mcp__time__get_current_time to \.caretz/settings\.json")
    term.expect("allow\\? ")
    term.child.send("a\r")
    term.expect("Twice.")
    term.ctrl_d()

    saved = json.loads((workspace / ".caretz" / "settings.json").read_text())
    assert saved == {"permissions": {"allow": ["mcp__time__get_current_time"]}}
    assert "".join(term.transcript).count("caretz asks before it runs") == 1
    results = [r.messages[-1]["content"][0] for r in server.requests[1:]]
    assert all(json.loads(block["content"])["timezone"] == "UTC" for block in results)


def test_a_servers_prompt_is_a_slash_command_and_a_mention_attaches_its_resource(
    caretz: Caretz, server: ModelServer, terminal
):
    from tests.mcp.test_resources import README, library, user_text

    caretz.write_config({"profiles": {"general": {"mcpServers": {"library": library()}}}})
    server.add(text("Reviewed."), text("Fridays."))
    term = terminal()

    term.expect("mcp: server 'library' ready")
    term.type("/help")
    term.expect(f"/mcp__library__review <pr> \\[style\\]{STYLE}  {STYLE}Review a pull request")
    term.type('/mcp__library__review 7 "very careful"')
    term.expect("Reviewed.")
    term.type("what does @library:notes://readme say?")
    term.expect("mcp: attached @library:notes://readme")
    term.expect("Fridays.")
    term.ctrl_d()

    first, second = server.requests
    assert user_text(first) == "Review pull request 7 in a very careful style."
    assert README in user_text(second, -1)
