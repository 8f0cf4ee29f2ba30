"""The line both views print for a command the model started as a background job
(bash with `background: true`): marked `⧗` with the job's id, so it reads as something
still running rather than a command that finished."""

from __future__ import annotations

from typing import Any

from rich.markup import escape

from caretz.session.records.loop import ToolReturned
from caretz.text import one_line
from caretz.tools.jobs import started_job_id

COMMAND_CHARS = 80


def background_job(call: dict[str, Any], event: ToolReturned) -> str | None:
    """The id of the job a `Tool.Result` says its bash call started; None for any other."""
    arguments = call.get("arguments") or {}
    if call.get("name") != "bash" or arguments.get("background") is not True or not event.ok:
        return None
    return started_job_id(event.output or "")


def job_started_line(job_id: str, call: dict[str, Any], hint: str) -> str:
    """`⧗ background job j1: npm run dev (hint)`, as markup."""
    command = one_line(str((call.get("arguments") or {}).get("command", "")), COMMAND_CHARS)
    return f"[cyan]⧗ background job {escape(job_id)}:[/] {escape(command)} [dim]({escape(hint)})[/]"
