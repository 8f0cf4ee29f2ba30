"""The `[permission]` lines: what was asked, answered or refused, one line each, as the
terminal views and `caretz sessions show` print them."""

from __future__ import annotations

from typing import Any

from caretz.text import one_line

INPUT_CHARS = 100
YOLO_BANNER = (
    "yolo mode: commands run without a sandbox and nothing asks first (deny rules still apply)"
)


def permission_line(event: dict[str, Any]) -> str | None:
    """A Permission.Asked or Permission.Decided event as one line; None for other events."""
    kind = event.get("type")
    call = f"{event.get('tool')} `{one_line(str(event.get('input') or ''), INPUT_CHARS)}`"
    reason = event.get("reason") or ""
    if kind == "Permission.Asked":
        return f"[permission] asked about {call}: {reason}"
    if kind != "Permission.Decided":
        return None
    if not event.get("would_ask"):
        return f"[permission] refused {call}: {reason}"
    if not event.get("asked"):
        return f"[permission] denied {call} (nobody can approve in a headless run): {reason}"
    answer = event.get("answer")
    line = f"[permission] {_ANSWERS.get(str(answer), str(answer))}: {call}"
    if event.get("saved_rules"):
        line += f"; saved {', '.join(event['saved_rules'])}"
    if event.get("save_error"):
        line += f"; {event['save_error']}"
    if event.get("note"):
        line += f" (note: {one_line(str(event['note']))})"
    return line


_ANSWERS = {"yes": "yes, once", "always": "yes, always", "no": "no"}
