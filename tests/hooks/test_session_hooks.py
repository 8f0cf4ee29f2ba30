"""A session's hooks in process: real sessions (start_session) against the loopback model
server, real hook commands, real session logs."""

from __future__ import annotations

import io
import json
import shutil
import tempfile
from pathlib import Path

import pytest
from rich.console import Console

from caretz.agent.compaction import CompactionPolicy
from caretz.app.session import AppSession, start_session
from caretz.config.settings import resolve_settings
from caretz.session.events import read_events
from caretz.ui.live import LiveView
from caretz.ui.repl import Repl
from tests.agent import test_compaction
from tests.agent.test_compaction import Recorder
from tests.e2e.hook_scripts import LOG_EVENT, hooks_entry, logged_events, project_settings
from tests.e2e.hook_scripts import write_hook as write_script
from tests.modelserver import text, tool

env = test_compaction.env  # the loopback server's URL and a test key


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def open_session(env: dict[str, str], workspace: Path) -> AppSession:
    return start_session(resolve_settings({}, env), Recorder(), env, workspace=workspace)


def hook_events(session: AppSession) -> list[dict]:
    return [e.to_dict() for e in read_events(session.events_path) if e.type.startswith("Hook.")]


def test_a_pre_compact_hook_can_block_compaction_for_its_trigger(env, workspace, server):
    refuse = "echo 'keep the whole history for the audit' >&2; exit 2"
    log = write_script(workspace, "log", LOG_EVENT)
    project_settings(
        workspace,
        {"hooks": {"PreCompact": [hooks_entry(log, "manual"), hooks_entry(refuse, "manual")]}},
    )
    session = open_session(env, workspace)
    for number in range(3):
        server.add(tool("bash", command="echo hi"), text(f"answer {number}"))
        session.agent.run_turn(f"turn {number}")
    before = list(session.agent.conversation.messages)

    result = session.agent.compact(CompactionPolicy(keep_recent_turns=1), reason="manual")

    assert result is not None and not result.changed
    assert result.summary_error == (
        "a PreCompact hook blocked it: keep the whole history for the audit"
    )
    assert session.agent.conversation.messages == before  # nothing was summarized
    assert len(server.requests) == 6  # and no summary was asked for
    assert [e["trigger"] for e in logged_events(workspace)] == ["manual"]
    server.add(text("SUMMARY of the early turns"))
    auto = session.agent.compact(CompactionPolicy(keep_recent_turns=1, target_ratio=0.0))
    assert auto is not None and auto.summarized  # the hooks match "manual" only
    session.close()


def test_clear_starts_a_session_whose_start_hooks_say_clear(env, workspace, server):
    log = write_script(workspace, "log", LOG_EVENT)
    project_settings(workspace, {"hooks": {"SessionStart": [hooks_entry(log)]}})
    console = Console(file=io.StringIO(), width=100)
    view = LiveView(console)
    session = start_session(resolve_settings({}, env), view, env, workspace=workspace)
    repl = Repl(session, view, console, env)

    repl.new_session()

    assert [e["source"] for e in logged_events(workspace)] == ["startup", "clear"]
    assert repl.session.hooks is not None and repl.session.id != session.id
    repl.close()


def test_pre_tool_use_hooks_chain_and_the_next_sees_the_rewritten_input(env, workspace, server):
    first = """echo '{"hookSpecificOutput": {"updatedInput": {"command": "echo second"}}}'"""
    log = write_script(workspace, "log", LOG_EVENT)
    project_settings(
        workspace, {"hooks": {"PreToolUse": [hooks_entry(first), hooks_entry(log, "Bash")]}}
    )
    session = open_session(env, workspace)
    server.add(tool("bash", command="echo first", description="greets"), text("ok"))

    session.agent.run_turn("go")

    (seen,) = logged_events(workspace)
    assert seen["tool_input"] == {"command": "echo second", "description": "greets"}
    result = server.requests[1].messages[-1]["content"][0]["content"]
    assert result.startswith("second")
    session.close()


def test_file_tools_show_hooks_an_absolute_file_path_and_take_it_back(env, workspace, server):
    moved = workspace / "elsewhere.txt"
    moved.write_text("moved here\n")
    redirect = json.dumps({"hookSpecificOutput": {"updatedInput": {"file_path": str(moved)}}})
    log = write_script(workspace, "log", LOG_EVENT)
    project_settings(
        workspace,
        {"hooks": {"PreToolUse": [hooks_entry(log, "Read"), hooks_entry(f"echo '{redirect}'")]}},
    )
    (workspace / "notes.txt").write_text("original\n")
    session = open_session(env, workspace)
    server.add(tool("read", path="notes.txt"), text("ok"))

    session.agent.run_turn("read the notes")

    (seen,) = logged_events(workspace)
    assert seen["tool_name"] == "Read"
    assert seen["tool_input"] == {"path": "notes.txt", "file_path": str(workspace / "notes.txt")}
    assert "moved here" in server.requests[1].messages[-1]["content"][0]["content"]
    session.close()


def test_subagents_calls_meet_pre_tool_use_but_their_prompts_are_not_user_prompts(
    env, workspace, server
):
    log = write_script(workspace, "log", LOG_EVENT)
    project_settings(
        workspace,
        {"hooks": {"PreToolUse": [hooks_entry(log)], "UserPromptSubmit": [hooks_entry(log)]}},
    )
    (workspace / "data.txt").write_text("7\n")
    session = open_session(env, workspace)
    server.add(
        tool("task", agent="reader", prompt="Read data.txt."),
        tool("read", path="data.txt"),
        text("It is 7."),
        text("Found 7."),
    )

    result = session.agent.run_turn("find the number")

    assert result.status == "done"
    seen = [(e["hook_event_name"], e.get("tool_name")) for e in logged_events(workspace)]
    assert seen == [("UserPromptSubmit", None), ("PreToolUse", "Task"), ("PreToolUse", "Read")]
    session.close()


def test_the_interactive_session_says_why_a_prompt_was_not_sent(env, workspace, server):
    refuse = "echo 'no deploys on Fridays' >&2; exit 2"
    project_settings(workspace, {"hooks": {"UserPromptSubmit": [hooks_entry(refuse)]}})
    console = Console(file=io.StringIO(), width=200, color_system=None)
    view = LiveView(console)
    session = start_session(resolve_settings({}, env), view, env, workspace=workspace)
    repl = Repl(session, view, console, env)

    result = repl.run_turn("deploy now")

    assert result is not None and (result.status, result.exit_code) == ("hook", 6)
    shown = console.file.getvalue()
    assert "[hook] UserPromptSubmit `echo 'no deploys on Fridays' >&2; exit 2` blocked" in shown
    assert "a UserPromptSubmit hook blocked the prompt; it was not sent" in shown
    assert "stopped by a hook" in shown
    assert server.requests == []
    repl.close()


def test_hooks_follow_the_sessions_sandbox_when_a_switch_rebuilds_it(env, workspace, server):
    scratch = Path(tempfile.mkdtemp(prefix="caretz-hooks-", dir="/var/tmp"))  # not /tmp
    try:
        mark = scratch / "outside.txt"
        write_outside = f"echo out >> {mark} || true"
        project_settings(workspace, {"hooks": {"PostToolUse": [hooks_entry(write_outside)]}})
        session = open_session(env, workspace)
        server.add(tool("bash", command="echo one"), text("one"))
        session.agent.run_turn("first")
        assert not mark.exists()  # in the session's sandbox: nothing written outside

        session.switch(permission_mode="yolo")  # the sandbox is off from now on
        server.add(tool("bash", command="echo two"), text("two"))
        session.agent.run_turn("second")

        assert session.hooks is not None and session.hooks.where.sandbox is session.sandbox
        assert mark.read_text() == "out\n"  # hooks run as commands do then
        session.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
