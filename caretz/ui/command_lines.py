"""The line a custom command's `!` command or `@` file (a `Command.Ran` event) is shown
as, in the session views and in `caretz sessions show`."""

from __future__ import annotations

from caretz.session.records.session import CommandRan
from caretz.text import shorten

INPUT_CHARS = 120


def command_line(event: CommandRan) -> str:
    """`/commit !`git status` → ok, 0.02s`; a refusal says why."""
    head = f"{event.command} {shorten(event.input, INPUT_CHARS)} →"
    if event.refused:
        return f"{head} refused: {event.refused}"
    if event.ok:
        return f"{head} ok, {event.duration_s:.2f}s"
    code = event.exit_code
    mark = f"exit {code}" if code is not None else "failed"
    return f"{head} {mark}, {event.duration_s:.2f}s"
