"""Terminal lines for LoopGuard.* events, in the form the user guide shows.

[loop-guard] judging: repeat: 3× Bash: <path>/db_test.go:N: undefined: testDB
[loop-guard] stuck (0.90) → shadow mode, no redirect
  reason: testDB is declared in a file with a build tag the test run doesn't set.
  try instead: run go test with -tags integration, or move testDB out of the tagged file.
"""

from __future__ import annotations

from typing import Any

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


def render_lines(event: dict[str, Any], detailed: bool) -> list[str]:
    """The lines to print for one event; [] for events that need none."""
    renderer = _RENDERERS.get(event.get("type", ""))
    return renderer(event, detailed) if renderer else []


def _judging(event: dict[str, Any], detailed: bool) -> list[str]:
    return [f"{PREFIX} judging: {event.get('headline', '')}"]


def _judged(event: dict[str, Any], detailed: bool) -> list[str]:
    verdict = event.get("verdict") or {}
    confidence = float(verdict.get("confidence") or 0.0)
    error = event.get("error")
    if error:
        lines = [f"{PREFIX} no verdict ({error}) → carrying on"]
    elif event.get("unsure"):
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


def _arrow(event: dict[str, Any]) -> str:
    action = event.get("action", "redirect")
    if event.get("mode") == "shadow" or not event.get("applied", True):
        return _SHADOW_ARROWS.get(action, "→ shadow mode, no change")
    return _ACTIVE_ARROWS.get(action, "→ carrying on")


def _reasons(verdict: dict[str, Any]) -> list[str]:
    lines = []
    if verdict.get("reason"):
        lines.append(f"  reason: {verdict['reason']}")
    if verdict.get("try_instead"):
        lines.append(f"  try instead: {verdict['try_instead']}")
    return lines


def _judge_line(event: dict[str, Any]) -> str:
    usage = event.get("usage") or {}
    latency = float(event.get("latency_s") or 0.0)
    tokens = (
        f"{int(usage.get('input_tokens', 0)):,} in / {int(usage.get('output_tokens', 0)):,} out"
    )
    return f"  judge: {event.get('model', '?')} · {latency:.1f}s · {tokens} tokens"


def _headline(event: dict[str, Any]) -> str:
    headline = str(event.get("headline") or "")
    detector = str(event.get("detector") or "")
    if detector and not headline.startswith(f"{detector}:"):
        return f"{detector}: {headline}" if headline else detector
    return headline


def _fired(event: dict[str, Any], detailed: bool) -> list[str]:
    # Judge-level firings show as "judging: …"; in active mode the others show
    # through what the guard did about them (Warned, Blocked, Redirected, Stopped).
    # A stop level that asks the judge first (action "judge") shows as "judging: …" too.
    if event.get("severity", "judge") == "judge" or event.get("action") == "judge":
        return []
    if event.get("applied", True):
        return []
    arrow = _SHADOW_ARROWS.get(event.get("action", ""), "→ shadow mode, no change")
    return [f"{PREFIX} {_headline(event)} {arrow}"]


def _warned(event: dict[str, Any], detailed: bool) -> list[str]:
    return [f"{PREFIX} {_headline(event)} → warning the agent"]


def _blocked(event: dict[str, Any], detailed: bool) -> list[str]:
    return [f"{PREFIX} {_headline(event)} → call refused"]


def _redirected(event: dict[str, Any], detailed: bool) -> list[str]:
    if event.get("judged"):
        return []  # the Judged line already said "→ redirecting"
    alone = f" (no judge answered: {event['no_judge']})" if event.get("no_judge") else ""
    return [f"{PREFIX} {_headline(event)} → redirecting{alone}"]


def _stopped(event: dict[str, Any], detailed: bool) -> list[str]:
    lines = [] if event.get("judged") else [f"{PREFIX} {_headline(event)} → ending the turn"]
    notice = str(event.get("notice") or f"{PREFIX} the guard ended the turn.")
    return lines + notice.splitlines()


def _cut(event: dict[str, Any], detailed: bool) -> list[str]:
    return [f"{PREFIX} {_headline(event)} → final report cut off"]


def _inactive(event: dict[str, Any], detailed: bool) -> list[str]:
    return [
        f"{PREFIX} not watching {event.get('model_ref', 'this model')}: "
        "it is not in loopGuard.models"
    ]


def _resuming(event: dict[str, Any], detailed: bool) -> list[str]:
    return [
        f"{PREFIX} resuming automatically ({event.get('count', '?')} of {event.get('max', '?')})"
    ]


_RENDERERS = {
    "LoopGuard.Judging": _judging,
    "LoopGuard.Judged": _judged,
    "LoopGuard.Fired": _fired,
    "LoopGuard.Warned": _warned,
    "LoopGuard.Blocked": _blocked,
    "LoopGuard.Redirected": _redirected,
    "LoopGuard.Stopped": _stopped,
    "LoopGuard.Cut": _cut,
    "LoopGuard.Inactive": _inactive,
    "LoopGuard.Resuming": _resuming,
}
