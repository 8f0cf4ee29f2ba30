"""Terminal lines for LoopGuard events, exactly as the user guide shows them."""

from __future__ import annotations

from caretz.session.records.parse import parse_record
from caretz.ui.guard_lines import render_lines

HEADLINE = "repeat: 3× Bash: <path>/db_test.go:N: undefined: testDB"
REASON = "testDB is declared in a file with a build tag the test run doesn't set."
TRY = "run go test with -tags integration, or move testDB out of the tagged file."


def judged(**fields) -> dict:
    event = {
        "type": "LoopGuard.Judged",
        "trigger": "repeat",
        "headline": HEADLINE,
        "verdict": {"stuck": True, "confidence": 0.9, "reason": REASON, "try_instead": TRY},
        "model": "anthropic/claude-opus-5-5",
        "latency_s": 2.31,
        "usage": {"input_tokens": 1204, "output_tokens": 88},
        "error": None,
        "mode": "shadow",
        "action": "redirect",
        "applied": False,
    }
    event.update(fields)
    return event


def test_judging_line():
    event = {"type": "LoopGuard.Judging", "trigger": "repeat", "headline": HEADLINE}
    assert render_lines(parse_record(event), detailed=False) == [
        f"[loop-guard] judging: {HEADLINE}"
    ]


def test_stuck_in_shadow_mode_is_the_documented_block():
    assert render_lines(parse_record(judged()), detailed=False) == [
        "[loop-guard] stuck (0.90) → shadow mode, no redirect",
        f"  reason: {REASON}",
        f"  try instead: {TRY}",
    ]


def test_stuck_again_in_shadow_mode_says_no_stop():
    lines = render_lines(parse_record(judged(action="stop")), detailed=False)
    assert lines[0] == "[loop-guard] stuck (0.90) → shadow mode, no stop"


def test_stuck_in_active_mode_redirects_then_ends_the_turn():
    first = judged(mode="active", action="redirect", applied=True)
    again = judged(mode="active", action="stop", applied=True)
    assert (
        render_lines(parse_record(first), detailed=False)[0]
        == "[loop-guard] stuck (0.90) → redirecting"
    )
    assert (
        render_lines(parse_record(again), detailed=False)[0]
        == "[loop-guard] stuck (0.90) → ending the turn"
    )


def test_not_stuck_carries_on():
    event = judged(
        verdict={"stuck": False, "confidence": 0.2, "reason": "new errors", "try_instead": ""},
        action="continue",
    )
    assert render_lines(parse_record(event), detailed=False) == [
        "[loop-guard] not stuck (0.20) → carrying on"
    ]


def test_a_judge_error_is_no_verdict():
    event = judged(
        verdict={"stuck": False, "confidence": 0.0, "reason": "", "try_instead": ""},
        error="timeout after 15s",
        action="continue",
    )
    assert render_lines(parse_record(event), detailed=False) == [
        "[loop-guard] no verdict (timeout after 15s) → carrying on"
    ]


def test_detailed_output_adds_the_judge_model_latency_and_tokens():
    lines = render_lines(parse_record(judged()), detailed=True)
    assert lines[-1] == "  judge: anthropic/claude-opus-5-5 · 2.3s · 1,204 in / 88 out tokens"
    assert len(lines) == 4


def fired(severity: str, **fields) -> dict:
    event = {
        "type": "LoopGuard.Fired",
        "detector": "identical-call",
        "fingerprint": 'bash {"command":"ls"}',
        "headline": 'identical-call: 6× bash {"command":"ls"}',
        "severity": severity,
        "step": 12,
        "mode": "active",
        "action": severity,
        "applied": True,
    }
    event.update(fields)
    return event


def test_fired_lines_name_the_detector_in_shadow_mode():
    assert render_lines(parse_record(fired("judge")), detailed=False) == []
    shadow = fired("stop", mode="shadow", action="redirect", applied=False)
    assert render_lines(parse_record(shadow), detailed=False) == [
        '[loop-guard] identical-call: 6× bash {"command":"ls"} → shadow mode, no redirect'
    ]
    warn = fired("warn", mode="shadow", applied=False)
    assert render_lines(parse_record(warn), detailed=False)[0].endswith("→ shadow mode, no warning")
    # In active mode what the guard did shows instead (Warned, Blocked, Redirected, Stopped).
    assert render_lines(parse_record(fired("warn")), detailed=False) == []


def test_outcome_lines():
    base = {"detector": "tool-budget", "headline": "tool-budget: 200 tool calls this turn"}
    warned = {"type": "LoopGuard.Warned", **base, "message": "…"}
    assert render_lines(parse_record(warned), False) == [
        "[loop-guard] tool-budget: 200 tool calls this turn → warning the agent"
    ]
    blocked = {
        "type": "LoopGuard.Blocked",
        "detector": "disallowed-tools",
        "headline": 'disallowed-tools: bash matches "rm -rf"',
    }
    assert render_lines(parse_record(blocked), False) == [
        '[loop-guard] disallowed-tools: bash matches "rm -rf" → call refused'
    ]
    redirected = {"type": "LoopGuard.Redirected", **base, "judged": False}
    assert render_lines(parse_record(redirected), False) == [
        "[loop-guard] tool-budget: 200 tool calls this turn → redirecting"
    ]
    assert render_lines(parse_record({**redirected, "judged": True}), False) == []


def test_stopped_shows_the_notice():
    notice = "[loop-guard] The turn was still stuck … Reply to carry on from there."
    event = {"type": "LoopGuard.Stopped", "headline": HEADLINE, "judged": True, "notice": notice}
    assert render_lines(parse_record(event), False) == [notice]
    unjudged = {**event, "judged": False, "detector": "repeat"}
    assert render_lines(parse_record(unjudged), False) == [
        f"[loop-guard] {HEADLINE} → ending the turn",
        notice,
    ]


def test_inactive_and_resuming_lines_and_silence_for_the_rest():
    inactive = {"type": "LoopGuard.Inactive", "model_ref": "anthropic/claude-opus-5-5"}
    assert render_lines(parse_record(inactive), False) == [
        "[loop-guard] not watching anthropic/claude-opus-5-5: it is not in loopGuard.models"
    ]
    resuming = {"type": "LoopGuard.Resuming", "count": 1, "max": 3}
    assert render_lines(parse_record(resuming), False) == [
        "[loop-guard] resuming automatically (1 of 3)"
    ]
    assert render_lines(parse_record({"type": "LoopGuard.Something"}), True) == []
    assert render_lines(parse_record({"type": "Tool.Result"}), True) == []
