"""The translation of caretz's events and outcomes into ACP's terms, piece by piece."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp import RequestError
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    HttpMcpServer,
    McpServerStdio,
    RequestPermissionResponse,
    ResourceContentBlock,
    TextContentBlock,
)

from caretz.acp.mcp import editor_servers
from caretz.acp.notices import guard_notice
from caretz.acp.permissions import answer, options
from caretz.acp.prompt import prompt_text
from caretz.acp.sessions import stop_reason
from caretz.acp.toolcalls import diff_hunks, finished, title
from caretz.acp.translate import EventTranslator
from caretz.acp.view import TurnSigns
from caretz.app.session import Outcome
from caretz.config_base import ConfigError
from caretz.session.records.guard import LoopGuardJudged, LoopGuardJudging, LoopGuardWarned
from caretz.session.records.loop import ToolCalled, ToolReturned
from caretz.tools.asking import Question
from caretz.tools.files import unified_diff

WORKSPACE = Path("/work/project")


def test_each_hunk_of_an_edit_is_one_diff_even_with_lines_that_look_like_headers():
    before = "a\n-- comment\nb\n" + "keep\n" * 10 + "c\n"
    after = "a\n++ added\nb\n" + "keep\n" * 10 + "C\n"
    hunks = diff_hunks(unified_diff(before, after, "src/x.sql"), WORKSPACE)
    assert [(h.path, h.old_text, h.new_text) for h in hunks] == [
        (
            "/work/project/src/x.sql",
            "a\n-- comment\nb\nkeep\nkeep\n",
            "a\n++ added\nb\nkeep\nkeep\n",
        ),
        ("/work/project/src/x.sql", "keep\nkeep\nkeep\nc\n", "keep\nkeep\nkeep\nC\n"),
    ]


def test_a_new_file_shows_its_whole_text_and_a_failed_edit_its_error():
    translator = EventTranslator(WORKSPACE)
    call = {"id": "c1", "name": "write", "arguments": {"path": "new.txt", "content": "hi\n"}}
    translator.updates(ToolCalled(call=call))
    (update,) = translator.updates(
        ToolReturned(call_id="c1", name="write", ok=True, output="Wrote")
    )
    (diff,) = update.content
    assert (diff.path, diff.old_text, diff.new_text) == ("/work/project/new.txt", None, "hi\n")
    failed = ToolReturned(call_id="c2", name="edit", ok=False, output="old_string not found")
    shown = finished(None, failed, WORKSPACE)
    assert shown.status == "failed"
    assert shown.content[0].content.text == "old_string not found"


def test_titles_say_what_a_call_does():
    assert title("bash", {"command": "pytest -q\n  --lf"}) == "pytest -q --lf"
    assert title("grep", {"pattern": "TODO", "path": "src"}) == "grep TODO in src"
    assert title("mcp__time__now", {"zone": "UTC"}) == "mcp__time__now: zone='UTC'"


def test_a_guard_notice_says_it_is_caretz_and_keeps_angle_brackets_literal():
    event = LoopGuardJudging(trigger="repeat", headline="repeat: 3× Bash: <path>/x.go:N: undefined")
    notice = guard_notice(event)
    assert (
        notice
        == "\n\n> **caretz loop guard:** judging: repeat: 3× Bash: \\<path>/x.go:N: undefined\n\n"
    )
    quiet = LoopGuardJudged(verdict={"stuck": False, "confidence": 0.2})
    assert "not stuck (0.20) → carrying on" in guard_notice(quiet)
    warned = LoopGuardWarned(detector="repeat", headline="3× Bash: ls")
    assert "repeat: 3× Bash: ls → warning the agent" in guard_notice(warned)


@pytest.mark.parametrize(
    ("status", "signs", "cancelled", "expected"),
    [
        ("done", TurnSigns(), False, "end_turn"),
        ("done", TurnSigns(refused=True), False, "refusal"),
        ("loop_guard", TurnSigns(), False, "end_turn"),
        ("limit", TurnSigns(output_limit=True), False, "max_tokens"),
        ("limit", TurnSigns(), False, "max_turn_requests"),
        ("interrupted", TurnSigns(), True, "cancelled"),
        ("limit", TurnSigns(), True, "cancelled"),
        ("done", TurnSigns(), True, "end_turn"),  # it ended before the cancel reached it
        ("hook", TurnSigns(prompt_blocked=True), False, "refusal"),
        ("hook", TurnSigns(), False, "end_turn"),
    ],
)
def test_stop_reasons_say_how_the_work_ended(status, signs, cancelled, expected):
    assert (
        stop_reason(Outcome(status=status, exit_code=0, message="", text=""), signs, cancelled)
        == expected
    )


def test_a_failed_turn_is_the_prompt_request_s_error_with_its_line():
    with pytest.raises(RequestError) as raised:
        stop_reason(
            Outcome(status="error", exit_code=1, message="the provider gave up: 500", text=""),
            TurnSigns(),
            False,
        )
    assert str(raised.value) == "caretz: the provider gave up: 500"


def test_always_is_offered_only_with_a_rule_to_save_and_anything_unknown_is_no():
    question = Question(
        tool="bash", arguments={"command": "ls"}, summary="ls", reason="the mode asks"
    )
    assert [o.kind for o in options(question)] == ["allow_once", "reject_once"]
    picked = RequestPermissionResponse(
        outcome=AllowedOutcome(outcome="selected", option_id="allow-always")
    )
    assert answer(picked).choice == "always"
    made_up = RequestPermissionResponse(
        outcome=AllowedOutcome(outcome="selected", option_id="sure")
    )
    assert answer(made_up).choice == "no"
    assert (
        answer(RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))).choice == "no"
    )
    assert answer(None).choice == "no"


def test_a_link_to_a_file_outside_the_workspace_keeps_its_absolute_path():
    blocks = [
        TextContentBlock(type="text", text="see"),
        ResourceContentBlock(type="resource_link", uri="file:///etc/hosts", name="hosts"),
        ResourceContentBlock(type="resource_link", uri="https://example.com/a", name="a"),
    ]
    assert asyncio.run(prompt_text(blocks, WORKSPACE)) == "see @/etc/hosts @https://example.com/a"


def test_the_editor_s_mcp_servers_become_entries_and_a_bad_one_is_one_line():
    stdio = McpServerStdio(name="files", command="mcp-files", args=["--root", "."], env=[])
    http = HttpMcpServer(type="http", name="docs", url="https://docs.example/mcp", headers=[])
    files, docs = editor_servers([stdio, http])
    assert (files.name, files.entry.transport, files.entry.args) == (
        "files",
        "stdio",
        ["--root", "."],
    )
    assert (docs.entry.transport, docs.entry.url) == ("http", "https://docs.example/mcp")
    with pytest.raises(ConfigError, match="MCP server 'empty' from the editor"):
        editor_servers([McpServerStdio(name="empty", command="", args=[], env=[])])
