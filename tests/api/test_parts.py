"""The Python API's parts that need no session: settings from keywords, the records built
from the session's events, the permission callback's answers, the result object."""

from __future__ import annotations

import json

import pytest

from caretz.agent.outcomes import Outcome
from caretz.api import Answer, ConfigError, GuardNotice, Question, ToolCall, ToolCallResult
from caretz.api.events import SessionEvent, from_session_event, guard_verdict
from caretz.api.options import Options, resolve
from caretz.api.permission import CallbackAsker, as_answer
from caretz.api.result import GuardVerdict, RunResult, refused_before_start
from caretz.messages import Usage
from caretz.session.records.parse import parse_record
from caretz.tools.policy import EndTurn


def test_keywords_resolve_as_the_flags_of_the_same_names_over_env_and_profile(tmp_path):
    config = tmp_path / "profiles.json"
    profile = {"model": "anthropic/claude-haiku-4-5", "loopGuard": {"mode": "shadow"}}
    config.write_text(json.dumps({"profiles": {"ci": profile}}))
    env = {"CARETZ_CONFIG": str(config), "CARETZ_PROFILE": "ci", "CARETZ_PERMISSION_MODE": "ask"}
    settings = resolve(Options(loop_guard="active"), env)
    assert settings.profile_name == "ci"  # the variable, as no keyword names one
    assert settings.model.ref == "anthropic/claude-haiku-4-5"  # the profile's
    assert settings.loop_guard.mode == "active"  # the keyword beats the profile
    assert settings.permission_mode == "ask"  # the variable beats the default
    assert resolve(Options(permission_mode="read-only"), env).permission_mode == "read-only"


def test_a_bad_keyword_value_is_one_config_error_line_naming_the_keyword(tmp_path):
    with pytest.raises(ConfigError) as caught:
        resolve(Options(permission_mode="sometimes"), {"CARETZ_CONFIG": str(tmp_path / "x")})
    assert str(caught.value).startswith("permission_mode='sometimes': ")
    assert "\n" not in str(caught.value)


def test_one_rule_or_several_may_be_given():
    assert Options(allowed_tools="Bash(git diff:*)").flags() == {
        "allowed_tools": ["Bash(git diff:*)"]
    }
    assert Options(disallowed_tools=("WebFetch", "Bash(rm:*)")).flags() == {
        "disallowed_tools": ["WebFetch", "Bash(rm:*)"]
    }


def test_session_events_become_the_apis_records():
    called = {
        "type": "Tool.Called",
        "ts": 1.0,
        "turn": 1,
        "agent": "main",
        "index": 0,
        "call": {"id": "call_1", "name": "bash", "arguments": {"command": "ls"}},
    }
    assert from_session_event(parse_record(called)) == ToolCall(
        id="call_1", name="bash", arguments={"command": "ls"}
    )
    result = {
        "type": "Tool.Result",
        "call_id": "call_1",
        "name": "bash",
        "ok": False,
        "output": "boom",
        "exit_code": 2,
        "duration_s": 0.5,
        "agent": "main",
    }
    assert from_session_event(parse_record(result)) == ToolCallResult(
        call_id="call_1", name="bash", ok=False, output="boom", exit_code=2, duration_s=0.5
    )
    redirected = {
        "type": "LoopGuard.Redirected",
        "detector": "repeat",
        "headline": "same failure 3 times",
        "step": 7,
        "mode": "active",
        "note": "try the other fixture",
    }
    notice = from_session_event(parse_record(redirected))
    assert isinstance(notice, GuardNotice)
    assert (notice.kind, notice.detector, notice.text) == (
        "redirected",
        "repeat",
        "try the other fixture",
    )
    started = {"type": "Turn.Started", "ts": 2.0, "turn": 1, "agent": "main", "prompt": "x"}
    assert from_session_event(parse_record(started)) == SessionEvent("Turn.Started", started)


def test_a_judged_event_is_a_verdict():
    judged = {
        "type": "LoopGuard.Judged",
        "trigger": "checkEvery",
        "headline": "20 tool calls",
        "verdict": {"stuck": True, "confidence": 0.9, "reason": "loops", "try_instead": "stop"},
        "action": "redirect",
        "applied": True,
        "model": "anthropic/judge",
        "error": None,
    }
    assert guard_verdict(parse_record(judged)) == GuardVerdict(
        trigger="checkEvery",
        headline="20 tool calls",
        stuck=True,
        confidence=0.9,
        reason="loops",
        try_instead="stop",
        action="redirect",
        applied=True,
        model="anthropic/judge",
    )
    assert guard_verdict(parse_record({"type": "LoopGuard.Fired"})) is None


QUESTION = Question(
    tool="bash", arguments={"command": "curl x"}, summary="curl x", reason="the network is off"
)


def test_the_callbacks_answers():
    assert as_answer(True) == Answer("yes")
    assert as_answer(False) == Answer("no")
    assert as_answer("always") == Answer("always")
    assert as_answer(Answer("no", "use the mirror")) == Answer("no", "use the mirror")


def test_a_callback_that_fails_or_answers_nonsense_ends_the_turn_and_keeps_its_error():
    asker = CallbackAsker(lambda question: 42)
    with pytest.raises(EndTurn, match="the on_permission callback failed: TypeError"):
        asker(QUESTION)
    assert isinstance(asker.error, TypeError) and "on_permission returned 42" in str(asker.error)


def test_the_result_object_is_the_output_json_one():
    result = RunResult(
        session_id="s1",
        outcome=Outcome(status="done", exit_code=0, text="All green.", tool_calls=9),
        usage=Usage(input_tokens=130, output_tokens=25),
        cost_usd=0.0015,
        tool_calls=3,
        duration_s=1.23456,
        judge_usage=Usage(input_tokens=30, output_tokens=5),
        judge_cost_usd=0.0003,
        agents={"main": {"model": "anthropic/m", "input_tokens": 100}},
    )
    data = result.to_dict()
    assert list(data) == [  # the work's outcome read into the same keys as always
        "session_id",
        "status",
        "exit_code",
        "message",
        "text",
        "tool_calls",
        "usage",
        "cost_usd",
        "judge_cost_usd",
        "duration_s",
        "permission_denials",
        "guard_verdicts",
    ]
    assert (data["status"], data["exit_code"], data["message"], data["text"]) == (
        "done",
        0,
        "",
        "All green.",
    )
    assert data["tool_calls"] == 3  # the run's, not its last turn's
    assert (result.status, result.exit_code, result.text, result.ok) == (
        "done",
        0,
        "All green.",
        True,
    )
    assert data["usage"] == {
        "input_tokens": 130,
        "output_tokens": 25,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
        "judge": {
            "input_tokens": 30,
            "output_tokens": 5,
            "cache_read_tokens": 0,
            "cache_write_tokens": 0,
        },
        "agents": {"main": {"model": "anthropic/m", "input_tokens": 100}},
    }
    assert (data["cost_usd"], data["judge_cost_usd"]) == (0.0015, 0.0003)
    assert (data["duration_s"], data["permission_denials"], data["guard_verdicts"]) == (
        1.235,
        [],
        [],
    )
    assert "goal" not in data and "permission_hint" not in data
    refused = refused_before_start("--model: unknown provider 'x'").to_dict()
    assert (refused["status"], refused["exit_code"], refused["session_id"]) == (
        "usage_error",
        2,
        None,
    )
