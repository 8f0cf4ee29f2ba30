"""Permission questions through `session/request_permission`, and the permission mode as
the editor switches it."""

from __future__ import annotations

import asyncio
import json

from acp import RequestError, text_block
from acp.schema import ConfigOptionUpdate, CurrentModeUpdate

from tests.e2e.acp_editor import HOLD, Editor, caretz_acp, run, texts
from tests.e2e.sandbox_folders import require
from tests.modelserver import text, tool

WRITE = "echo hello >> out.txt"
RULE = "Bash(echo hello)"  # what caretz proposes to save for it (the redirect is in the workspace)


def test_what_caretz_would_ask_is_asked_reject_then_allow_once_then_always(
    caretz, server, workspace
):
    require("bwrap")
    server.add(*[tool("bash", command=WRITE) for _ in range(4)], text("Wrote it."))
    editor = Editor(answers=["reject", "allow-once", "allow-always"])

    async def scenario() -> str:
        async with caretz_acp(caretz, editor, "--permission-mode", "ask") as (conn, _):
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            assert new.modes.current_mode_id == "ask"
            answer = await conn.prompt(session_id=new.session_id, prompt=[text_block("write")])
            return answer.stop_reason

    assert run(scenario()) == "end_turn"

    # Three questions: the fourth call runs on the rule "always" saved.
    assert len(editor.questions) == 3
    calls = editor.started("execute")
    assert len(calls) == 4
    for question, call in zip(editor.questions, calls, strict=False):
        assert question.tool_call.tool_call_id == call.tool_call_id
        assert question.updates_before > editor.index(call)  # the call was shown first
        assert question.tool_call.title == WRITE
        assert "caretz asks before it runs this bash call" in texts(question.tool_call.content)
    first = editor.questions[0].options
    assert [o.kind for o in first] == ["allow_once", "allow_always", "reject_once"]
    assert first[1].name == f"Always allow {RULE} (saved to .caretz/settings.json)"
    rejected, once, always, unasked = (editor.finished(c.tool_call_id) for c in calls)
    assert rejected.status == "failed" and "The user declined" in texts(rejected.content)
    assert [once.status, always.status, unasked.status] == ["completed"] * 3
    assert (workspace / "out.txt").read_text() == "hello\n" * 3
    saved = json.loads((workspace / ".caretz" / "settings.json").read_text())
    assert saved["permissions"]["allow"] == [RULE]
    # The model read the refusal as the call's result.
    declined = server.requests[1].messages[-1]["content"][0]
    assert declined["is_error"] and "The user declined" in str(declined["content"])


def test_the_editor_switches_the_permission_mode_and_the_next_turn_follows_it(
    caretz, server, workspace
):
    require("bwrap")
    (workspace / "notes.md").write_text("old\n")
    server.add(tool("write", path="notes.md", content="new\n"), text("Could not write."))
    editor = Editor()

    async def scenario() -> None:
        async with caretz_acp(caretz, editor) as (conn, _):
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            modes = {m.id for m in new.modes.available_modes}
            assert modes == {"auto", "ask", "read-only", "plan", "yolo"}
            options = {o.id: o for o in new.config_options}
            assert options["model"].current_value == "anthropic/claude-test"
            assert options["model"].category == "model"
            await conn.set_session_mode(session_id=new.session_id, mode_id="read-only")
            await conn.prompt(session_id=new.session_id, prompt=[text_block("write notes")])
            guard = await conn.set_config_option(
                config_id="loop_guard", session_id=new.session_id, value="shadow"
            )
            now = {o.id: o.current_value for o in guard.config_options}
            assert now == {
                "model": "anthropic/claude-test",
                "mode": "read-only",
                "loop_guard": "shadow",
            }
            try:
                await conn.set_config_option(
                    config_id="model", session_id=new.session_id, value="nowhere/model-x"
                )
            except RequestError as error:
                assert "nowhere" in str(error)
            else:
                raise AssertionError("an unknown provider was accepted")

    run(scenario())

    (mode,) = editor.of(CurrentModeUpdate)
    assert mode.current_mode_id == "read-only"
    (listed,) = editor.of(ConfigOptionUpdate)  # for editors that show config options
    assert {o.id: o.current_value for o in listed.config_options}["mode"] == "read-only"
    (write,) = editor.started("edit")
    refused = editor.finished(write.tool_call_id)
    assert refused.status == "failed" and "read-only" in texts(refused.content)
    assert (workspace / "notes.md").read_text() == "old\n"
    assert editor.questions == []  # refused by the mode: nothing to ask


def test_a_cancel_while_a_question_is_open_ends_the_work_without_running_the_call(
    caretz, server, workspace
):
    require("bwrap")
    server.add(tool("bash", command=WRITE), text("never asked for"))
    editor = Editor(answers=[HOLD])

    async def scenario() -> tuple[str, str]:
        async with caretz_acp(caretz, editor, "--permission-mode", "ask") as (conn, _):
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            asking = conn.prompt(session_id=new.session_id, prompt=[text_block("write")])
            prompting = asyncio.ensure_future(asking)
            await editor.until(lambda: bool(editor.questions))
            await conn.cancel(session_id=new.session_id)
            return new.session_id, (await prompting).stop_reason

    session_id, stop = run(scenario())

    assert stop == "cancelled"
    assert not (workspace / "out.txt").exists()
    assert len(server.requests) == 1  # the work ended: the model was not asked again
    (call,) = editor.started("execute")
    finished = editor.finished(call.tool_call_id)
    assert finished.status == "failed" and "declined" not in texts(finished.content)
    events = caretz.events(session_id)
    assert [e["status"] for e in events if e["type"] == "Turn.Ended"] == ["interrupted"]
    # Asked, and never answered: the cancel is no "no" the editor gave.
    assert [e["type"] for e in events if e["type"].startswith("Permission.")] == [
        "Permission.Asked"
    ]


def test_a_plan_is_approved_through_the_editor_and_the_mode_follows(caretz, server, workspace):
    require("bwrap")
    plan = "# Plan\n\n1. Write notes.md"
    server.add(
        tool("write", path="notes.md", content="early\n"),
        tool("exit_plan_mode", plan=plan),
        tool("write", path="notes.md", content="new\n"),
        text("Written."),
    )
    editor = Editor(answers=["allow-always"])  # the option that carries it out in ask mode

    async def scenario() -> str:
        async with caretz_acp(caretz, editor, "--permission-mode", "plan") as (conn, _):
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            assert new.modes.current_mode_id == "plan"
            answer = await conn.prompt(session_id=new.session_id, prompt=[text_block("plan")])
            return answer.stop_reason

    editor.answers.append("allow-once")  # then the write asks, in ask mode
    assert run(scenario()) == "end_turn"

    approval, write = editor.questions
    names = [o.name for o in approval.options]
    assert names == [
        "yes, carry it out in auto mode (changes in the sandbox run unasked)",
        "yes, carry it out in ask mode (every change asks first)",
        "no, keep planning (a note says what to change)",
    ]
    shown = texts(approval.tool_call.content)
    assert "approve this plan and leave plan mode?" in shown and "1. Write notes.md" in shown
    (mode,) = editor.of(CurrentModeUpdate)
    assert mode.current_mode_id == "ask"  # the editor's picker follows the approval
    assert write.tool_call.title.endswith("notes.md")
    assert (workspace / "notes.md").read_text() == "new\n"
    refused = server.requests[1].messages[-1]["content"][0]
    assert refused["is_error"] and "plan mode: write changes files" in str(refused["content"])
