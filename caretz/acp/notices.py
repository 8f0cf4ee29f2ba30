"""caretz's own words in the editor's chat: the loop guard's notices and other lines that
come from caretz rather than from the model.

Each is a quoted paragraph that starts with "caretz", so nobody takes it for the agent's
answer. The loop guard's lines say what the terminal says (docs/loop-guard.md).
"""

from __future__ import annotations

from caretz.acp.events import GuardEvent

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


def guard_notice(event: GuardEvent) -> str:
    """The notice for a loop-guard event; "" for one that needs none."""
    lines = _LINES.get(event.kind, _none)(event)
    return from_caretz(lines, LABEL)


def _none(event: GuardEvent) -> list[str]:
    return []


def _judging(event: GuardEvent) -> list[str]:
    return [f"judging: {event.headline}"]


def _judged(event: GuardEvent) -> list[str]:
    confidence = f"({event.confidence:.2f})"
    if event.error:
        return [f"no verdict ({event.error}) → carrying on"]
    if event.unsure:
        return [f"stuck {confidence} → below judge.minConfidence, carrying on", *_reasons(event)]
    if not event.stuck:
        return [f"not stuck {confidence} → carrying on"]
    return [f"stuck {confidence} {_arrow(event)}", *_reasons(event)]


def _arrow(event: GuardEvent) -> str:
    if event.mode == "shadow" or not event.applied:
        return _SHADOW.get(event.action, "→ shadow mode, no change")
    return _ACTIVE.get(event.action, "→ carrying on")


def _reasons(event: GuardEvent) -> list[str]:
    lines = []
    if event.reason:
        lines.append(f"reason: {event.reason}")
    if event.try_instead:
        lines.append(f"try instead: {event.try_instead}")
    return lines


def _redirected(event: GuardEvent) -> list[str]:
    return [] if event.judged else [f"{event.headline} → redirecting"]


def _stopped(event: GuardEvent) -> list[str]:
    lines = [] if event.judged else [f"{event.headline} → ending the turn"]
    notice = event.notice or "the guard ended the turn."
    return lines + [line.removeprefix("[loop-guard] ") for line in notice.splitlines()]


def _warned(event: GuardEvent) -> list[str]:
    return [f"{event.headline} → warning the agent"]


def _blocked(event: GuardEvent) -> list[str]:
    return [f"{event.headline} → call refused"]


def _cut(event: GuardEvent) -> list[str]:
    return [f"{event.headline} → final report cut off"]


def _resuming(event: GuardEvent) -> list[str]:
    return [f"resuming automatically ({event.count} of {event.maximum})"]


_LINES = {
    "Judging": _judging,
    "Judged": _judged,
    "Redirected": _redirected,
    "Stopped": _stopped,
    "Warned": _warned,
    "Blocked": _blocked,
    "Cut": _cut,
    "Resuming": _resuming,
}
