"""The lines both views (the quiet console and the live view) print for the events that
are notices: a goal's progress, the sandbox's start-up notice, a custom command's `!`
commands and `@` files, hooks and MCP servers, a compaction, a reply cut off at the
output limit. Rich markup, one string a line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

from caretz.lazy import lazy_module
from caretz.session.records.base import GoalRecord, HookRecord, McpRecord, Record
from caretz.session.records.loop import ModelOutputLimit
from caretz.session.records.session import (
    CommandRan,
    SandboxGitUndone,
    SessionCompacted,
    SessionOpened,
)

if TYPE_CHECKING:
    from caretz.ui import command_lines, goal_lines, hook_lines, mcp_lines
else:
    # The lines of a goal's, a custom command's, hooks' and MCP servers' events: each loaded
    # once a run has such an event.
    goal_lines = lazy_module("caretz.ui.goal_lines")
    command_lines = lazy_module("caretz.ui.command_lines")
    hook_lines = lazy_module("caretz.ui.hook_lines")
    mcp_lines = lazy_module("caretz.ui.mcp_lines")


def notice_lines(event: Record, detailed: bool, headless: bool = False) -> list[str]:
    """`headless`: for a run without a prompt (`-p`), which says less of what went well."""
    if isinstance(event, SessionCompacted):
        return [compaction_line(event)]
    if isinstance(event, ModelOutputLimit):
        return [f"[yellow]{escape(output_limit_line(event))}[/]"]
    if isinstance(event, GoalRecord):
        return [f"[cyan]{escape(text)}[/]" for text in goal_lines.goal_lines(event, detailed)]
    if isinstance(event, SessionOpened):
        return session_notices(event)
    if isinstance(event, SandboxGitUndone):
        return [f"[yellow]caretz:[/] {escape(line)}" for line in event.undone or []]
    if isinstance(event, CommandRan) and not event.refused:  # a refusal is the error line
        return [f"[dim]{escape(command_lines.command_line(event))}[/]"]
    if isinstance(event, HookRecord):
        return [
            f"[{colour}]{escape(text)}[/]"
            for colour, text in hook_lines.hook_lines(event, detailed)
        ]
    if isinstance(event, McpRecord):
        text = mcp_lines.mcp_line(event, detailed, headless)
        return [f"[yellow]{escape(text)}[/]"] if text else []
    return []


def compaction_line(event: SessionCompacted) -> str:
    parts = []
    if event.summarized:
        parts.append(f"summarized {event.summarized} older message(s)")
    if event.trimmed:
        parts.append(f"trimmed {event.trimmed} old tool output(s)")
    if event.shortened:
        parts.append(f"shortened the newest {event.shortened} tool result(s) to fit the window")
    sizes = f"~{_k(event.tokens_before or 0)} → ~{_k(event.tokens_after or 0)} tokens"
    overflow = event.reason == "overflow"
    why = " (the provider said the prompt is too long)" if overflow else ""
    line = f"[cyan]⟳ compacted the conversation{why}:[/] {', '.join(parts)} [dim]({sizes})[/]"
    if event.summary_error:
        line += f"\n[yellow]  no summary: {escape(str(event.summary_error))}[/]"
    return line


def _k(tokens: int) -> str:
    return f"{tokens / 1000:.1f}k" if tokens >= 1000 else str(tokens)


def output_limit_line(event: ModelOutputLimit) -> str:
    """A reply cut off at max_tokens: what became of it (agent/output_limit.py)."""
    limit = f"the reply hit the {event.max_tokens or 0:,}-token output limit"
    action = event.action
    if action == "calls_not_run":
        names = ", ".join(event.tool_calls or [])
        return (
            f"{limit}: its calls ({names}) were not run; the model was told to write less at once"
        )
    if action == "continued":
        return f"{limit}: asking the model to continue (continuation {event.continuation})"
    return f"{limit} again: the answer is cut off"


def session_notices(event: SessionOpened) -> list[str]:
    lines = []
    if event.other_project:
        lines.append(
            f"[yellow]resuming session {escape(event.session_id)}, named by its ID, of "
            f"another folder: {escape(event.other_project)}[/]"
        )
    sandbox = event.sandbox or {}
    lines += [f"[yellow]caretz:[/] {escape(line)}" for line in sandbox.get("notices") or []]
    notice = (event.project_config or {}).get("notice")
    if notice:
        lines.append(f"[yellow]caretz:[/] {escape(str(notice))}")
    if sandbox.get("notice"):
        lines.append(f"[yellow]sandbox:[/] {escape(sandbox['notice'])}")
    return lines
