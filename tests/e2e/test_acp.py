"""`caretz acp` end to end: the SDK's client starts the real agent in a subprocess, which
runs its turns against the loopback model server, with real files and the real sandbox."""

from __future__ import annotations

import asyncio
import json

import pytest
from acp import text_block
from acp.schema import FileEditToolCallContent, PromptResponse, UsageUpdate

from tests.e2e.acp_editor import Editor, caretz_acp, run, texts
from tests.e2e.sandbox_folders import require
from tests.modelserver import Reply, text, tool

PLAN = [
    {"content": "Bump y", "status": "in_progress"},
    {"content": "Check the file", "status": "pending"},
]


def script_edit_and_command(server) -> None:
    server.add(
        Reply(
            thinking="The user wants y bumped.",
            text="I will plan it first.",
            tool_calls=[("todo", {"todos": PLAN})],
        ),
        tool("read", path="app.py"),
        tool("edit", path="app.py", old_string="y = 2", new_string="y = 3"),
        tool("bash", command="cat app.py"),
        text("y is 3 now."),
    )


def test_a_prompt_streams_thinking_text_the_plan_a_diff_and_a_command_then_load_replays_it(
    caretz, server, workspace
):
    require("bwrap")
    (workspace / "app.py").write_text("x = 1\ny = 2\n")
    script_edit_and_command(server)
    editor = Editor()

    async def scenario() -> tuple[str, str]:
        async with caretz_acp(caretz, editor) as (conn, ready):
            assert ready.agent_capabilities.load_session is True
            assert ready.agent_capabilities.prompt_capabilities.embedded_context is True
            assert ready.auth_methods == []  # the key is in the environment
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            assert new.modes.current_mode_id == "auto"
            answer = await conn.prompt(session_id=new.session_id, prompt=[text_block("bump y")])
            listed = await conn.list_sessions(cwd=str(workspace))
            assert [s.session_id for s in listed.sessions] == [new.session_id]
            return new.session_id, answer.stop_reason

    session_id, stop = run(scenario())

    assert stop == "end_turn"
    assert editor.thoughts() == "The user wants y bumped."
    assert editor.text() == "I will plan it first.y is 3 now."
    (plan,) = editor.plans()
    assert [(e.content, e.status) for e in plan.entries] == [
        ("Bump y", "in_progress"),
        ("Check the file", "pending"),
    ]
    (edit,) = editor.started("edit")
    assert edit.title == "Edit app.py"
    assert [loc.path for loc in edit.locations] == [str(workspace / "app.py")]
    edited = editor.finished(edit.tool_call_id)
    assert edited.status == "completed"
    (diff,) = edited.content
    assert isinstance(diff, FileEditToolCallContent)
    assert (diff.path, diff.old_text, diff.new_text) == (
        str(workspace / "app.py"),
        "x = 1\ny = 2\n",
        "x = 1\ny = 3\n",
    )
    assert editor.index(edit) < editor.index(edited)
    (command,) = editor.started("execute")
    assert command.title == "cat app.py"
    ran = editor.finished(command.tool_call_id)
    assert ran.status == "completed" and "y = 3" in texts(ran.content)
    assert ran.raw_output["exit_code"] == 0
    assert (workspace / "app.py").read_text() == "x = 1\ny = 3\n"

    # session/load in a new agent process: the same session, replayed as updates.
    again = Editor()

    async def load() -> None:
        async with caretz_acp(caretz, again) as (conn, _):
            loaded = await conn.load_session(
                cwd=str(workspace), session_id=session_id, mcp_servers=[]
            )
            assert loaded.modes.current_mode_id == "auto"

    run(load())
    assert again.user_text() == "bump y"
    assert again.thoughts() == "The user wants y bumped."
    assert again.text() == "I will plan it first.y is 3 now."
    assert [c.tool_call_id for c in again.started()] == [c.tool_call_id for c in editor.started()]
    (replayed_edit,) = again.started("edit")
    assert again.finished(replayed_edit.tool_call_id).content == edited.content
    assert again.plans()[0].entries == plan.entries
    replayed = [u.session_update for u in again.updates]
    assert replayed[:2] == ["available_commands_update", "user_message_chunk"]  # then the prompt


def test_a_cancel_mid_command_ends_the_command_and_the_prompt_stops_as_cancelled(
    caretz, server, workspace
):
    require("bwrap")
    server.add(tool("bash", command="touch started && sleep 600"), text("Carrying on."))
    editor = Editor()

    async def scenario() -> tuple[str, str, str]:
        async with caretz_acp(caretz, editor) as (conn, _):
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            waiting = conn.prompt(session_id=new.session_id, prompt=[text_block("wait")])
            prompting = asyncio.ensure_future(waiting)
            await editor.until(
                lambda: (workspace / "started").exists() and editor.started("execute")
            )
            await conn.cancel(session_id=new.session_id)
            cancelled = (await prompting).stop_reason
            after = await conn.prompt(session_id=new.session_id, prompt=[text_block("go on")])
            return new.session_id, cancelled, after.stop_reason

    session_id, cancelled, after = run(scenario())

    assert cancelled == "cancelled"
    (command,) = editor.started("execute")
    ended = editor.finished(command.tool_call_id)
    assert ended.status == "failed" and ended.raw_output.get("ended_by") in (
        "cancelled",
        "interrupted",
    )
    events = caretz.events(session_id)
    (result,) = [e for e in events if e["type"] == "Tool.Result"]
    assert result["ended_by"] in ("cancelled", "interrupted") and result["duration_s"] < 600
    ends = [e["status"] for e in events if e["type"] == "Turn.Ended"]
    assert ends == ["interrupted", "done"]
    # The session carries on: the next prompt's request holds the interrupted call's result.
    assert after == "end_turn" and editor.text().endswith("Carrying on.")
    last = server.requests[-1].messages
    assert any(
        block.get("type") == "tool_result"
        for message in last
        if isinstance(message["content"], list)
        for block in message["content"]
    )


def test_a_loop_guard_stop_shows_caretz_notices_and_ends_the_turn_on_the_report(
    caretz, server, workspace
):
    require("bwrap")
    script = workspace / "gotest.sh"
    script.write_text(GO_TEST_SCRIPT)
    script.chmod(0o755)
    server.add(*[tool("bash", command="./gotest.sh ./db/...") for _ in range(6)])
    server.add(text("I changed nothing that worked. testDB is still undefined."))
    server.add(
        *[text(json.dumps(STUCK), usage=(1000, 50, 0)) for _ in range(2)], model="judge-model"
    )
    caretz.write_config({"prices": PRICES})
    editor = Editor()
    flags = ("--loop-guard", "active", "--loop-guard-model", "anthropic/judge-model")

    async def scenario() -> PromptResponse:
        async with caretz_acp(caretz, editor, *flags) as (conn, _):
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            guard = {o.id: o.current_value for o in new.config_options}["loop_guard"]
            assert guard == "active"
            return await conn.prompt(session_id=new.session_id, prompt=[text_block("fix db")])

    answer = run(scenario())

    assert answer.stop_reason == "end_turn"
    # The prompt's usage counts the judge's two calls, and shows them apart; the session's
    # cost goes out in a usage_update before the answer.
    usage = answer.usage
    assert (usage.input_tokens, usage.output_tokens) == (7 * 100 + 2000, 7 * 20 + 100)
    assert usage.total_tokens == 2700 + 240
    caretz_part = usage.field_meta["caretz"]
    assert caretz_part["judge"]["inputTokens"] == 2000 and caretz_part["judge"]["calls"] == 2
    assert caretz_part["judge"]["costUsd"] == pytest.approx(0.0025)
    assert caretz_part["costUsd"] == pytest.approx(0.0042 + 0.0025)
    (update,) = editor.of(UsageUpdate)
    assert update.cost.amount == pytest.approx(0.0067) and update.cost.currency == "USD"
    assert 0 < update.used < update.size
    said = editor.text()
    assert "**caretz loop guard:** judging: repeat: 3×" in said
    assert "**caretz loop guard:** stuck (0.90) → redirecting" in said
    assert "reason: testDB is declared in a file with a build tag" in said
    assert "**caretz loop guard:** stuck (0.90) → ending the turn" in said
    assert "so the guard ended it" in said
    # The last message is the report, after the notice that says it follows.
    assert said.endswith("I changed nothing that worked. testDB is still undefined.")
    assert said.index("ending the turn") < said.index("I changed nothing that worked")
    assert len(editor.started("execute")) == 6


GO_TEST_SCRIPT = """#!/usr/bin/env bash
n=$(( $(cat .runs 2>/dev/null || echo 0) + 1 )); echo $n > .runs
dir=$(mktemp -d)
echo "$dir/db_test.go:$((10 + n)):9: undefined: testDB"
echo "FAIL	example.com/shop/db [build failed]"
exit 1
"""
PRICES = {
    "anthropic/claude-test": {"input": 3.0, "output": 15.0},
    "anthropic/judge-model": {"input": 1.0, "output": 5.0},
}
STUCK = {
    "stuck": True,
    "confidence": 0.9,
    "reason": "testDB is declared in a file with a build tag the test run doesn't set.",
    "try_instead": "run go test with -tags integration.",
}


def test_an_editor_that_hangs_up_mid_command_ends_the_work_and_caretz_exits(
    caretz, server, workspace
):
    require("bwrap")
    server.add(tool("bash", command="touch started && sleep 600"))
    editor = Editor()

    async def scenario() -> str:
        async with caretz_acp(caretz, editor) as (conn, _):
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            waiting = conn.prompt(session_id=new.session_id, prompt=[text_block("wait")])
            asyncio.ensure_future(waiting)
            await editor.until(lambda: (workspace / "started").exists())
            return new.session_id  # leaving closes caretz's stdin, the prompt unanswered

    session_id = run(scenario())

    assert editor.process.returncode == 0  # it exited by itself, not terminated
    events = caretz.events(session_id)
    assert [e["status"] for e in events if e["type"] == "Turn.Ended"] == ["interrupted"]
    (result,) = [e for e in events if e["type"] == "Tool.Result"]
    assert result["ended_by"] in ("cancelled", "interrupted")
