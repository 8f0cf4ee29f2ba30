"""caretz's own words in the editor's chat: the loop guard's notices and other lines that
come from caretz rather than from the model.

Each is a quoted paragraph that starts with "caretz", so nobody takes it for the agent's
answer. The loop guard's lines say what the terminal says (docs/loop-guard.md).
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
    # The guard's records, read on its first record: a session with the guard off never loads them.
    records = lazy_module("caretz.session.records.guard")

LABEL = "caretz loop guard"
_ACTIVE = {"redirect": "→ redirecting", "stop": "→ ending the turn"}
_SHADOW = {
    "redirect": "→ shadow mode, no redirect",
    "stop": "→ shadow mode, no stop",
    "warn": "→ shadow mode, no warning",
    "block": "→ shadow mode, no block",
}


def from_caretz(lines: list[str], label: str = "caretz") -> str:
    """`lines` as one quoted paragraph, the first led by `label` (Markdown: a hard break
    between lines, a blank line before and after)."""
    if not lines:
        return ""
    first, *rest = (escaped(line) for line in lines)
    body = [f"> **{label}:** {first}", *(f"> {line}" if line else ">" for line in rest)]
    return "\n\n" + "  \n".join(body) + "\n\n"


def escaped(text: str) -> str:
    """`text` as Markdown shows it literally: `<path>` is no HTML tag, `*` no emphasis."""
    for mark in ("\\", "`", "*", "<"):
        text = text.replace(mark, "\\" + mark)
    return text


def guard_notice(event: LoopGuardRecord) -> str:
    """The notice for a loop-guard record; "" for one that needs none."""
    lines = _lines().get(type(event), _none)(event)
    return from_caretz(lines, LABEL)


def _none(event: LoopGuardRecord) -> list[str]:
    return []


def _headline(event: records.LoopGuardOutcome) -> str:
    """What fired, with its detector in front: "repeat: 3× Bash: ..."."""
    headline, detector = event.headline or "", event.detector or ""
    if detector and not headline.startswith(f"{detector}:"):
        return f"{detector}: {headline}" if headline else detector
    return headline


def _judging(event: records.LoopGuardJudging) -> list[str]:
    return [f"judging: {event.headline or ''}"]


def _judged(event: records.LoopGuardJudged) -> list[str]:
    verdict = event.verdict or {}
    confidence = f"({float(verdict.get('confidence') or 0.0):.2f})"
    if event.error:
        return [f"no verdict ({event.error}) → carrying on"]
    if event.unsure:
        return [f"stuck {confidence} → below judge.minConfidence, carrying on", *_reasons(verdict)]
    if not verdict.get("stuck"):
        return [f"not stuck {confidence} → carrying on"]
    return [f"stuck {confidence} {_arrow(event)}", *_reasons(verdict)]


def _arrow(event: records.LoopGuardJudged) -> str:
    if event.mode == "shadow" or not event.applied:
        return _SHADOW.get(event.action, "→ shadow mode, no change")
    return _ACTIVE.get(event.action, "→ carrying on")


def _reasons(verdict: dict[str, Any]) -> list[str]:
    lines = []
    if verdict.get("reason"):
        lines.append(f"reason: {verdict['reason']}")
    if verdict.get("try_instead"):
        lines.append(f"try instead: {verdict['try_instead']}")
    return lines


def _redirected(event: records.LoopGuardRedirected) -> list[str]:
    return [] if event.judged else [f"{_headline(event)} → redirecting"]


def _stopped(event: records.LoopGuardStopped) -> list[str]:
    lines = [] if event.judged else [f"{_headline(event)} → ending the turn"]
    notice = event.notice or "the guard ended the turn."
    return lines + [line.removeprefix("[loop-guard] ") for line in notice.splitlines()]


def _warned(event: records.LoopGuardWarned) -> list[str]:
    return [f"{_headline(event)} → warning the agent"]


def _blocked(event: records.LoopGuardBlocked) -> list[str]:
    return [f"{_headline(event)} → call refused"]


def _cut(event: records.LoopGuardCut) -> list[str]:
    return [f"{_headline(event)} → final report cut off"]


def _resuming(event: records.LoopGuardResuming) -> list[str]:
    return [f"resuming automatically ({event.count or 0} of {event.max or 0})"]


@functools.cache
def _lines() -> dict[type[Record], Callable[[Any], list[str]]]:
    return {
        records.LoopGuardJudging: _judging,
        records.LoopGuardJudged: _judged,
        records.LoopGuardRedirected: _redirected,
        records.LoopGuardStopped: _stopped,
        records.LoopGuardWarned: _warned,
        records.LoopGuardBlocked: _blocked,
        records.LoopGuardCut: _cut,
        records.LoopGuardResuming: _resuming,
    }
