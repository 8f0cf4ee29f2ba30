"""Past sessions as text: the rows of `caretz sessions list` and `/sessions`, and
the lines of `caretz sessions show`."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

from caretz.lazy import lazy_module
from caretz.session.records import loop, session
from caretz.session.records.base import (
    CheckpointRecord,
    GoalRecord,
    HookRecord,
    LoopGuardRecord,
    McpRecord,
    PermissionRecord,
    Record,
)
from caretz.session.records.guard import LoopGuardStopped
from caretz.session.records.session import SessionOpened
from caretz.text import one_line, shorten
from caretz.ui.command_lines import command_line
from caretz.ui.console import result_note
from caretz.ui.goal_lines import goal_lines
from caretz.ui.guard_lines import PREFIX as GUARD_PREFIX
from caretz.ui.guard_lines import render_lines
from caretz.ui.hook_lines import describe as describe_hook
from caretz.ui.permission_lines import permission_line

if TYPE_CHECKING:
    from caretz.ui import checkpoint_lines, mcp_lines, notice_lines, shell_view
else:
    # What `sessions show` reads besides: Rich, pydantic and the app; `sessions list` needs none.
    checkpoint_lines = lazy_module("caretz.ui.checkpoint_lines")
    notice_lines = lazy_module("caretz.ui.notice_lines")
    shell_view = lazy_module("caretz.ui.shell_view")
    mcp_lines = lazy_module("caretz.ui.mcp_lines")

if TYPE_CHECKING:
    from caretz.session.store import SessionInfo

PROMPT_PREVIEW_CHARS = 60
ARGUMENTS_PREVIEW_CHARS = 120


def started_text(info: SessionInfo) -> str:
    """When the session started, in local time; empty when the log does not say."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(info.started)) if info.started else ""


def prompt_preview(info: SessionInfo) -> str:
    """The session's title on one line, as the lists of sessions show it."""
    return one_line(info.title, PROMPT_PREVIEW_CHARS)


def age_text(seconds: float) -> str:
    """How long ago, in the largest whole unit: `40s ago`, `5m ago`, `3h ago`, `2d ago`."""
    seconds = max(0, int(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return f"{seconds}s ago"


def list_line(info: SessionInfo, now: float | None = None) -> str:
    """One session as a line of `caretz sessions list`: its ID, how long ago it was last
    written, its folder, model, turns, how its last turn ended and its title."""
    now = time.time() if now is None else now
    return (
        f"{info.id}  {age_text(now - info.updated)}  {info.folder or '-'}  {info.model}  "
        f"{info.turns} turn(s)  {info.last_status or '-'}  "
        f"{prompt_preview(info)}"
    )


def describe_event(event: Record) -> str | None:
    """An event of the session log as `caretz sessions show` prints it; None to skip it."""
    if isinstance(event, SessionOpened):
        return f"{event.type} {event.session_id} model={event.model} cwd={event.cwd}"
    if isinstance(event, loop.TurnStarted):
        return f"\n> {event.prompt}"
    if isinstance(event, loop.ToolCalled):
        call = event.call
        arguments = call.get("raw_arguments") or json.dumps(call["arguments"], sort_keys=True)
        return f"  {call['name']} {shorten(arguments, ARGUMENTS_PREVIEW_CHARS)}"
    if isinstance(event, loop.ToolResult):
        how = result_note(event)  # an exit code, a timeout, a cancel; none for a refusal
        mark = "ok" if event.ok else f"failed ({how})" if how else "failed"
        return f"    → {mark}, {event.duration_s}s"
    if isinstance(event, loop.ModelResponse) and event.message.get("content"):
        return event.message["content"]
    if isinstance(event, LoopGuardRecord):
        lines = render_lines(event, detailed=True)
        if isinstance(event, LoopGuardStopped):  # its notice is the turn's end line: printed there
            notice = str(event.notice or "").splitlines()
            lines = [line for line in lines if line not in notice]
        return "\n".join(lines) or None
    return _describe_more(event)


def _describe_more(event: Record) -> str | None:
    """`describe_event` for the records of the session's other parts."""
    if isinstance(event, PermissionRecord):
        return permission_line(event)
    if isinstance(event, GoalRecord):
        return "\n".join(goal_lines(event, detailed=True)) or None
    if isinstance(event, McpRecord):
        return mcp_lines.mcp_line(event, detailed=True)
    if isinstance(event, session.SandboxGitUndone):
        return "\n".join(f"    [caretz] {line}" for line in event.undone or []) or None
    if isinstance(event, session.ScheduleRun):
        return f"[scheduled run of job {event.job}]"
    if isinstance(event, session.SessionChanged):
        return f"[{event.change} changed] model={event.model} loop-guard={event.loop_guard}"
    if isinstance(event, session.SessionCompacted):
        return (
            f"[compacted ({event.reason})] {event.tokens_before:,} → "
            f"{event.tokens_after:,} tokens; {event.trimmed} outputs trimmed, "
            f"{event.summarized} messages summarized"
        )
    if isinstance(event, loop.ModelOutputLimit):
        return f"[output limit] {notice_lines.output_limit_line(event)}"
    if isinstance(event, loop.TurnEnded):
        # A loop-guard stop's message is the guard's notice, which has a prefix of its own.
        message = str(event.message or "").removeprefix(f"{GUARD_PREFIX} ")
        return f"[{event.status}] {message}".rstrip()
    if isinstance(event, CheckpointRecord):
        return checkpoint_lines.describe(event)
    if isinstance(event, session.ShellRan):
        return shell_view.describe(event)
    if isinstance(event, session.CommandRan):
        return f"  {command_line(event)}"
    if isinstance(event, HookRecord):
        return describe_hook(event)
    return None
