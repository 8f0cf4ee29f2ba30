"""The plan tool: the whole list each time, read leniently, refused in words the model can use."""

from __future__ import annotations

from pathlib import Path

import pytest

from caretz.messages import Message, ToolCall
from caretz.plan import PlanItem, plan_lines, plan_progress, read_plan
from caretz.tools.base import ToolContext
from caretz.tools.registry import ToolRegistry, default_tools
from caretz.tools.todo import latest_plan

PLAN = {
    "todos": [
        {"content": "read the failing test", "status": "done"},
        {"content": "fix   the\nfixture", "status": "in_progress"},
        {"content": "run the suite", "status": "pending"},
    ]
}


def run_todo(tmp_path: Path, args: object):
    registry = ToolRegistry(default_tools())
    return registry.run(
        ToolCall(id="c1", name="todo", arguments=args), ToolContext(workspace=tmp_path)
    )  # type: ignore[arg-type]


def test_the_tool_answers_with_the_whole_plan_drawn(tmp_path):
    result = run_todo(tmp_path, PLAN)

    assert result.ok
    assert result.output == (
        "Plan updated (1 of 3 done):\n"
        "[x] read the failing test\n"
        "[>] fix the fixture\n"
        "[ ] run the suite"
    )


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ({"todos": "read, fix, run"}, "must be an array"),
        ({"todos": [{"content": "", "status": "done"}]}, "item 1 needs a non-empty content"),
        ({"todos": [{"content": "x", "status": "blocked"}]}, "status 'blocked'"),
        ({"todos": ["just text"]}, "item 1 must be an object"),
    ],
)
def test_a_plan_that_does_not_fit_is_a_failed_result_naming_the_item(tmp_path, args, words):
    result = run_todo(tmp_path, args)

    assert not result.ok
    assert words in result.output


def test_statuses_other_agents_use_are_read_as_ours():
    plan = read_plan({"todos": [{"content": "a", "status": "completed"}, {"content": "b"}]})

    assert plan == (PlanItem("a", "done"), PlanItem("b", "pending"))
    assert plan_progress(plan) == "1 of 2 done" and plan_progress(()) == "empty"
    assert plan_lines(plan) == ["[x] a", "[ ] b"]


def test_the_latest_plan_is_the_newest_call_that_did_not_fail():
    good = ToolCall(id="c1", name="todo", arguments=PLAN)
    refused = ToolCall(
        id="c2", name="todo", arguments={"todos": [{"content": "x", "status": "nope"}]}
    )
    messages = [
        Message(role="user", content="fix it"),
        Message(role="assistant", content="", tool_calls=[good]),
        Message(role="tool", content="Plan updated", tool_call_id="c1"),
        Message(role="assistant", content="", tool_calls=[refused]),
        Message(role="tool", content="Invalid arguments", tool_call_id="c2", is_error=True),
    ]

    assert [item.text for item in latest_plan(messages)] == [
        "read the failing test",
        "fix the fixture",
        "run the suite",
    ]
    assert latest_plan(messages[:1]) == ()
