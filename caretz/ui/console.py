"""Headless output: streamed text on stdout, one line per tool call and guard event on stderr.

Rich decides colour: none when piped or when NO_COLOR is set.
"""

from __future__ import annotations

import json
import sys
from typing import IO, Any

from rich.console import Console
from rich.markup import escape

from caretz.plan import PLAN_TOOL
from caretz.providers.base import Retrying
from caretz.text import one_line, shorten
from caretz.ui.checkpoint_lines import CheckpointLines

_ARG_PREVIEW = 80


def call_preview(name: str, arguments: dict[str, Any]) -> str:
    """The one argument that says most about a call (the command, the path, the pattern)."""
    if name == PLAN_TOOL:
        from caretz.ui.goal_lines import plan_preview

        return plan_preview(arguments)
    for key in ("command", "path", "pattern", "agent", "prompt"):
        value = arguments.get(key)
        if isinstance(value, str) and value:
            return one_line(value, _ARG_PREVIEW)
    return shorten(json.dumps(arguments, sort_keys=True), _ARG_PREVIEW)


# How a command that did not finish by itself ended, as the tool line says it.
ENDINGS = {
    "timeout": "timed out",
    "interrupted": "cancelled, process group killed",
    "cancelled": "cancelled, process group killed",
}


def result_note(event: dict[str, Any]) -> str:
    """What a tool line says after the duration: how a failed call ended, if it did not
    simply exit non-zero; the exit code otherwise."""
    ended = event.get("ended_by")
    if ended:
        return ENDINGS.get(ended, ended)
    code = event.get("exit_code")
    return f"exit {code}" if not event["ok"] and code else ""


class TextOutput:
    """The human view of a headless run (`--output text` or `detailed`)."""

    def __init__(
        self, detailed: bool = False, out: IO[str] | None = None, err: Console | None = None
    ):
        self.detailed = detailed
        self.out = out or sys.stdout
        self.err = err or Console(stderr=True, highlight=False, soft_wrap=True)
        self.calls: dict[str, dict[str, Any]] = {}
        self.mid_line = False
        self.checkpoint_lines = CheckpointLines()

    # -- streamed deltas (TurnListener) -----------------------------------------
    def on_response_start(self) -> None:
        pass

    def on_text(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()
        self.mid_line = not text.endswith("\n")

    def on_thinking(self, text: str) -> None:
        pass

    def on_retry(self, event: Retrying) -> None:
        self.line(f"[yellow]retrying in {event.delay_s:g}s[/] ({escape(event.reason)})")

    # -- session events -----------------------------------------------------------
    def on_event(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "Tool.Called":
            self.calls[event["call"]["id"]] = event["call"]
        elif kind == "Tool.Result":
            self.tool_line(event)
        elif kind.startswith("LoopGuard."):
            from caretz.ui.guard_lines import render_lines

            for text in render_lines(event, self.detailed):
                self.line(f"[magenta]{escape(text)}[/]")
        elif kind == "Provider.Error":
            self.line(f"[red]provider error:[/] {escape(event['error'])}")
        elif kind == "Permission.Decided":
            from caretz.ui.permission_lines import permission_line

            self.line(f"[yellow]{escape(permission_line(event) or '')}[/]")
        elif kind.startswith("Goal."):
            from caretz.ui.goal_lines import goal_lines

            for text in goal_lines(event, self.detailed):
                self.line(f"[cyan]{escape(text)}[/]")
        elif kind.startswith("Session.") and (event.get("sandbox") or {}).get("notice"):
            self.line(f"[yellow]sandbox:[/] {escape(event['sandbox']['notice'])}")
        for markup in self.checkpoint_lines.render(event):
            self.line(markup)

    def tool_line(self, event: dict[str, Any]) -> None:
        call = self.calls.get(event["call_id"], {"name": event["name"], "arguments": {}})
        mark = "[green]✓[/]" if event["ok"] else "[red]✗[/]"
        preview = escape(call_preview(call["name"], call.get("arguments") or {}))
        note = result_note(event)
        status = f" {note}" if note else ""
        self.line(
            f"{mark} [bold]{call['name']}[/] {preview} [dim]({event['duration_s']:.1f}s{status})[/]"
        )
        if self.detailed and event["ok"] and call["name"] == PLAN_TOOL:
            from caretz.ui.goal_lines import plan_block

            for text in plan_block(call.get("arguments") or {}):
                self.line(f"[dim]{escape(text)}[/]")

    def closing(self, summary: dict[str, Any]) -> None:
        usage = summary["usage"]
        cost = summary.get("cost_usd")
        parts = [
            summary["status"],
            f"{summary['tool_calls']} tool calls",
            f"{usage['input_tokens']:,} in / {usage['output_tokens']:,} out tokens",
        ]
        if usage.get("cache_read_tokens"):
            parts.append(f"{usage['cache_read_tokens']:,} cached")
        if cost is not None:
            parts.append(f"${cost:.4f}")
        parts.append(f"{summary['duration_s']:.1f}s")
        parts.append(f"session {summary['session_id']}")
        # A loop-guard stop, and a goal's end, already printed their lines when they happened.
        shown = summary["status"] == "loop_guard" or "goal" in summary
        if summary.get("message") and not shown:
            self.line(f"[bold]{escape(summary['message'])}[/]")
        colour = "green" if summary["exit_code"] == 0 else "red"
        self.line(f"[{colour}]●[/] " + escape(" · ".join(parts)))

    def line(self, markup: str) -> None:
        if self.mid_line:
            self.out.write("\n")
            self.out.flush()
            self.mid_line = False
        self.err.print(markup)


class JsonOutput:
    """`--output json`: every event as a JSON line on stdout, then a result object."""

    def __init__(self, out: IO[str] | None = None):
        self.out = out or sys.stdout

    def on_response_start(self) -> None:
        pass

    def on_text(self, text: str) -> None:
        pass

    def on_thinking(self, text: str) -> None:
        pass

    def on_retry(self, event: Retrying) -> None:
        pass

    def on_event(self, event: dict[str, Any]) -> None:
        self.write(event)

    def closing(self, summary: dict[str, Any]) -> None:
        self.write({"type": "result", **summary})

    def write(self, data: dict[str, Any]) -> None:
        self.out.write(json.dumps(data, ensure_ascii=False, default=str) + "\n")
        self.out.flush()
