"""Terminal lines for LoopGuard.* events, in the form the user guide shows.

[loop-guard] judging: repeat: 3× Bash: <path>/db_test.go:N: undefined: testDB
[loop-guard] stuck (0.90) → shadow mode, no redirect
  reason: testDB is declared in a file with a build tag the test run doesn't set.
  try instead: run go test with -tags integration, or move testDB out of the tagged file.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from caretz.lazy import lazy_module
from caretz.session.records.base import LoopGuardRecord, Record

if TYPE_CHECKING:
    from caretz.session.records import guard as records
else:
    # The guard's events: read at its first event, so a run with the guard off never loads them.
    records = lazy_module("caretz.session.records.guard")

PREFIX = "[loop-guard]"
# The stop notice's last words suit a session that waits for a reply; a headless run has
# ended by the time it is read, so it says how to carry on instead.
REPLY_TO_CARRY_ON = "Reply to carry on from there."
CONTINUE_HEADLESS = 'Carry on from there with: caretz --continue -p "…"'


def headless_line(text: str) -> str:
    return text.replace(REPLY_TO_CARRY_ON, CONTINUE_HEADLESS)


_ACTIVE_ARROWS = {"redirect": "→ redirecting", "stop": "→ ending the turn"}
_SHADOW_ARROWS = {
    "redirect": "→ shadow mode, no redirect",
    "stop": "→ shadow mode, no stop",
    "warn": "→ shadow mode, no warning",
    "block": "→ shadow mode, no block",
}


def render_lines(event: Record, detailed: bool) -> list[str]:
    """The lines to print for one event; [] for events that need none."""
    if not isinstance(event, LoopGuardRecord):
        return []
    renderer = _renderers().get(type(event))
    return renderer(event, detailed) if renderer else []


def _judging(event: records.LoopGuardJudging, detailed: bool) -> list[str]:
    return [f"{PREFIX} judging: {event.headline}"]


def _judged(event: records.LoopGuardJudged, detailed: bool) -> list[str]:
    verdict = event.verdict or {}
    confidence = float(verdict.get("confidence") or 0.0)
    error = event.error
    if error:
        lines = [f"{PREFIX} no verdict ({error}) → carrying on"]
    elif event.unsure:
        threshold = "below judge.minConfidence, carrying on"
        lines = [f"{PREFIX} stuck ({confidence:.2f}) → {threshold}", *_reasons(verdict)]
    elif not verdict.get("stuck"):
        lines = [f"{PREFIX} not stuck ({confidence:.2f}) → carrying on"]
        if detailed:
            lines += _reasons(verdict)
    else:
        lines = [f"{PREFIX} stuck ({confidence:.2f}) {_arrow(event)}", *_reasons(verdict)]
    if detailed:
        lines.append(_judge_line(event))
    return lines


def _arrow(event: records.LoopGuardJudged) -> str:
    action = event.action
    if event.mode == "shadow" or not event.applied:
        return _SHADOW_ARROWS.get(action, "→ shadow mode, no change")
    return _ACTIVE_ARROWS.get(action, "→ carrying on")


def _reasons(verdict: dict[str, Any]) -> list[str]:
    lines = []
    if verdict.get("reason"):
        lines.append(f"  reason: {verdict['reason']}")
    if verdict.get("try_instead"):
        lines.append(f"  try instead: {verdict['try_instead']}")
    return lines


def _judge_line(event: records.LoopGuardJudged) -> str:
    usage = event.usage or {}
    latency = float(event.latency_s or 0.0)
    tokens = (
        f"{int(usage.get('input_tokens', 0)):,} in / {int(usage.get('output_tokens', 0)):,} out"
    )
    return f"  judge: {event.model or '?'} · {latency:.1f}s · {tokens} tokens"


def _headline(event: records.LoopGuardFired | records.LoopGuardOutcome) -> str:
    headline = str(event.headline or "")
    detector = str(event.detector or "")
    if detector and not headline.startswith(f"{detector}:"):
        return f"{detector}: {headline}" if headline else detector
    return headline


def _fired(event: records.LoopGuardFired, detailed: bool) -> list[str]:
    # Judge-level firings show as "judging: …"; in active mode the others show
    # through what the guard did about them (Warned, Blocked, Redirected, Stopped).
    # A stop level that asks the judge first (action "judge") shows as "judging: …" too.
    if event.severity == "judge" or event.action == "judge":
        return []
    if event.applied:
        return []
    arrow = _SHADOW_ARROWS.get(event.action, "→ shadow mode, no change")
    return [f"{PREFIX} {_headline(event)} {arrow}"]


def _warned(event: records.LoopGuardWarned, detailed: bool) -> list[str]:
    return [f"{PREFIX} {_headline(event)} → warning the agent"]


def _blocked(event: records.LoopGuardBlocked, detailed: bool) -> list[str]:
    return [f"{PREFIX} {_headline(event)} → call refused"]


def _redirected(event: records.LoopGuardRedirected, detailed: bool) -> list[str]:
    if event.judged:
        return []  # the Judged line already said "→ redirecting"
    alone = f" (no judge answered: {event.no_judge})" if event.no_judge else ""
    return [f"{PREFIX} {_headline(event)} → redirecting{alone}"]


def _stopped(event: records.LoopGuardStopped, detailed: bool) -> list[str]:
    lines = [] if event.judged else [f"{PREFIX} {_headline(event)} → ending the turn"]
    notice = str(event.notice or f"{PREFIX} the guard ended the turn.")
    return lines + notice.splitlines()


def _cut(event: records.LoopGuardCut, detailed: bool) -> list[str]:
    return [f"{PREFIX} {_headline(event)} → final report cut off"]


def _inactive(event: records.LoopGuardInactive, detailed: bool) -> list[str]:
    return [
        f"{PREFIX} not watching {event.model_ref or 'this model'}: it is not in loopGuard.models"
    ]


def _resuming(event: records.LoopGuardResuming, detailed: bool) -> list[str]:
    return [f"{PREFIX} resuming automatically ({event.count} of {event.max})"]


@functools.cache
def _renderers() -> dict[type[Record], Callable[[Any, bool], list[str]]]:
    return {
        records.LoopGuardJudging: _judging,
        records.LoopGuardJudged: _judged,
        records.LoopGuardFired: _fired,
        records.LoopGuardWarned: _warned,
        records.LoopGuardBlocked: _blocked,
        records.LoopGuardRedirected: _redirected,
        records.LoopGuardStopped: _stopped,
        records.LoopGuardCut: _cut,
        records.LoopGuardInactive: _inactive,
        records.LoopGuardResuming: _resuming,
    }
