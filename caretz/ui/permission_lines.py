"""The `[permission]` lines: what was asked, answered or refused, one line each, as the
terminal views and `caretz sessions show` print them."""

from __future__ import annotations

from caretz.session.records.base import Record
from caretz.session.records.permissions import PermissionAsked, PermissionDecided
from caretz.text import one_line

INPUT_CHARS = 100
YOLO_BANNER = (
    "yolo mode: commands run without a sandbox and nothing asks first (deny rules still apply)"
)


def permission_line(event: Record) -> str | None:
    """A Permission.Asked or Permission.Decided event as one line; None for other events."""
    if not isinstance(event, PermissionAsked | PermissionDecided):
        return None
    call = f"{event.tool} `{one_line(str(event.input or ''), INPUT_CHARS)}`"
    reason = event.reason or ""
    if isinstance(event, PermissionAsked):
        return f"[permission] asked about {call}: {reason}"
    if not event.would_ask:
        return f"[permission] refused {call}: {reason}"
    if not event.asked:
        return f"[permission] denied {call} (nobody can approve in a headless run): {reason}"
    answer = event.answer
    line = f"[permission] {_ANSWERS.get(str(answer), str(answer))}: {call}"
    if event.saved_rules:
        line += f"; saved {', '.join(event.saved_rules)}"
    if event.save_error:
        line += f"; {event.save_error}"
    if event.note:
        line += f" (note: {one_line(str(event.note))})"
    return line


def decided_line(event: Record) -> str | None:
    """A Permission.Decided event as one line; None for any other."""
    return permission_line(event) if isinstance(event, PermissionDecided) else None


_ANSWERS = {"yes": "yes, once", "always": "yes, always", "no": "no"}
