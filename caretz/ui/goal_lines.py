"""The `[goal]` lines a session shows for its goal's events, and the plan's lines.

Both views (the headless console and the interactive session) draw the same
lines; `--output detailed` adds the evaluator's model, latency and tokens.
"""

from __future__ import annotations

from typing import Any

from caretz.plan import plan_lines, plan_progress, read_plan
from caretz.session.records import goal as records
from caretz.session.records.base import Record
from caretz.text import one_line

_REASON_CHARS = 160


def goal_lines(event: Record, detailed: bool = False) -> list[str]:
    """The lines for one `Goal.*` event; [] for one that shows nothing."""
    if isinstance(event, records.GoalSet):
        return [
            f"[goal] set: {one_line(event.condition, 200)} "
            f"(at most {event.max_turns} turns, checked by {event.evaluator})"
        ]
    if isinstance(event, records.GoalEvaluated):
        return _evaluated(event, detailed)
    if isinstance(event, records.GoalResumed):
        return [f"[goal] resumed after turn {event.turn}/{event.max_turns}"]
    if isinstance(event, records.GoalPaused | records.GoalEnded):
        return [f"[goal] {event.message}" + _spend(event.spend_usd)]
    return []


def progress_line(turn: int, max_turns: int, outcome: str, spend: float | None) -> str:
    """`[goal] turn 3/20 · not met: 2 tests still fail · $0.41`"""
    return f"[goal] turn {turn}/{max_turns} · {outcome}{_spend(spend)}"


def _evaluated(event: records.GoalEvaluated, detailed: bool) -> list[str]:
    verdict = event.verdict
    reason = one_line(verdict.get("reason") or "", _REASON_CHARS)
    if event.error:
        outcome = f"no verdict ({event.error}) → carrying on"
    elif verdict.get("met"):
        outcome = f"met: {reason}" if reason else "met"
    elif verdict.get("impossible"):
        outcome = f"impossible: {reason}" if reason else "impossible"
    else:
        outcome = f"not met: {reason}" if reason else "not met"
    lines = [progress_line(event.turn, event.max_turns, outcome, event.spend_usd)]
    next_step = one_line(verdict.get("next_step") or "", _REASON_CHARS)
    if next_step and not verdict.get("met") and not event.error:
        lines.append(f"  next step: {next_step}")
    if detailed:
        usage = event.usage or {}
        lines.append(
            f"  evaluator: {event.model} · {event.latency_s or 0:.1f}s · "
            f"{usage.get('input_tokens', 0):,} in / {usage.get('output_tokens', 0):,} out tokens"
        )
    return lines


def _spend(spend: float | None) -> str:
    return f" · ${spend:.2f}" if spend is not None else ""


def plan_block(arguments: dict[str, Any]) -> list[str]:
    """A `todo` call's plan as the views draw it under the call's line: one line an item."""
    try:
        plan = read_plan(arguments)
    except ValueError:
        return []
    return [f"  {line}" for line in plan_lines(plan)]


def plan_preview(arguments: dict[str, Any]) -> str:
    """What a `todo` call's line says: `plan: 1 of 3 done`."""
    try:
        return f"plan: {plan_progress(read_plan(arguments))}"
    except ValueError:
        return "plan: (unreadable)"
