"""The [goal] lines both views draw."""

from __future__ import annotations

from caretz.session.records.parse import parse_record
from caretz.ui.goal_lines import goal_lines, plan_block, plan_preview


def evaluated(**fields) -> dict:
    base = {
        "type": "Goal.Evaluated",
        "turn": 3,
        "max_turns": 20,
        "verdict": {"met": False, "impossible": False, "reason": "2 tests still fail",
                    "next_step": "fix the fixture"},
        "error": None,
        "spend_usd": 0.4123,
        "model": "anthropic/judge",
        "latency_s": 1.25,
        "usage": {"input_tokens": 1204, "output_tokens": 88},
    }  # fmt: skip
    return {**base, **fields}


def test_the_progress_line_as_documented():
    assert goal_lines(parse_record(evaluated())) == [
        "[goal] turn 3/20 · not met: 2 tests still fail · $0.41",
        "  next step: fix the fixture",
    ]


def test_detailed_adds_the_evaluator_and_no_verdict_says_why():
    lines = goal_lines(
        parse_record(evaluated(error="timeout after 60s", spend_usd=None)), detailed=True
    )

    assert lines == [
        "[goal] turn 3/20 · no verdict (timeout after 60s) → carrying on",
        "  evaluator: anthropic/judge · 1.2s · 1,204 in / 88 out tokens",
    ]


def test_set_paused_resumed_and_ended_lines():
    assert goal_lines(
        parse_record(
            {"type": "Goal.Set", "condition": "tests pass", "max_turns": 5, "evaluator": "a/b"}
        )
    ) == ["[goal] set: tests pass (at most 5 turns, checked by a/b)"]
    assert goal_lines(parse_record({"type": "Goal.Resumed", "turn": 2, "max_turns": 5})) == [
        "[goal] resumed after turn 2/5"
    ]
    ended = {"type": "Goal.Ended", "message": "goal met after 2 turns: ok", "spend_usd": 1.5}
    assert goal_lines(parse_record(ended)) == ["[goal] goal met after 2 turns: ok · $1.50"]
    assert goal_lines(parse_record({"type": "Goal.Evaluating"})) == []


def test_the_plan_under_a_todo_call():
    args = {"todos": [{"content": "a", "status": "done"}, {"content": "b", "status": "pending"}]}

    assert plan_preview(args) == "plan: 1 of 2 done"
    assert plan_block(args) == ["  [x] a", "  [ ] b"]
    assert plan_block({"todos": "nope"}) == [] and plan_preview({}) == "plan: (unreadable)"
