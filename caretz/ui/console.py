"""Headless output: streamed text on stdout, one line per tool call and guard event on stderr.

Rich decides colour: none when piped or when NO_COLOR is set.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import IO, Any

from rich.cells import cell_len
from rich.console import Console, RenderableType
from rich.markup import escape
from rich.syntax import Syntax

from caretz.agent.parts import QuietListener
from caretz.plan import PLAN_TOOL
from caretz.providers.base import Retrying
from caretz.text import one_line, plural, shorten
from caretz.ui.checkpoint_lines import CheckpointLines
from caretz.ui.wrapping import hanging

_ARG_PREVIEW = 80
DIFF_MAX_LINES = 40
FAILED_OUTPUT_LINES = 3
OUTPUT_LINE_CHARS = 200  # a failed command's output line, shortened to this
_EXIT_NOTE = re.compile(r"\[exit code -?\d+\]")


def retry_line(event: Retrying) -> str:
    """The line that says a request is sent again, and why (markup)."""
    line = f"[yellow]retrying in {event.delay_s:g}s[/] ({escape(event.reason)})"
    return line + ": the reply starts over" if event.discarded is not None else line


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


def call_text(call: dict[str, Any]) -> str:
    """A logged call's preview; arguments that were not a JSON object show as they were sent."""
    raw = call.get("raw_arguments")
    if raw is not None:
        return one_line(raw, _ARG_PREVIEW) or "(no arguments)"
    return call_preview(call["name"], call.get("arguments") or {})


def output_tail(output: str) -> list[str]:
    """The last lines of a failed command's output, as dim markup lines."""
    lines = [
        line
        for line in output.rstrip().splitlines()
        if line.strip() and not _EXIT_NOTE.fullmatch(line.strip())  # the tool line says the exit
    ]
    return [
        f"  [dim]│ {escape(shorten(line, OUTPUT_LINE_CHARS))}[/]"
        for line in lines[-FAILED_OUTPUT_LINES:]
    ]


def diff_view(diff: str) -> list[RenderableType]:
    """An edit's diff, coloured where colour is on, cut to DIFF_MAX_LINES."""
    lines = diff.rstrip("\n").splitlines()
    shown = "\n".join(lines[:DIFF_MAX_LINES])
    view: list[RenderableType] = [
        Syntax(shown, "diff", theme="ansi_dark", background_color="default", word_wrap=True)
    ]
    if len(lines) > DIFF_MAX_LINES:
        view.append(f"  [dim]… {len(lines) - DIFF_MAX_LINES} more diff lines[/]")
    return view


class TextOutput:
    """The human view of a headless run (`--output text` or `detailed`)."""

    def __init__(
        self, detailed: bool = False, out: IO[str] | None = None, err: Console | None = None
    ):
        self.detailed = detailed
        self.out = out or sys.stdout
        self.err = err or Console(stderr=True, highlight=False, soft_wrap=True)
        self.calls: dict[str, dict[str, Any]] = {}
        self.told: set[str] = set()  # provider errors printed as they happened
        self.mid_line = False
        self.checkpoint_lines = CheckpointLines()
        self.streamed = ""  # this reply's text on stdout, since the last line on stderr
        self.start: int | None = None  # where this reply began, when stdout is a file

    # -- streamed deltas (TurnListener) -----------------------------------------
    def on_response_start(self) -> None:
        self.streamed = ""
        self.start = _file_position(self.out)

    def on_text(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()
        self.streamed += text
        self.mid_line = not text.endswith("\n")

    def on_thinking(self, text: str) -> None:
        pass

    def on_retry(self, event: Retrying) -> None:
        if event.discarded is not None:
            self.take_back_streamed()
        self.line(retry_line(event))

    def take_back_streamed(self) -> None:
        """Remove this reply's streamed text from stdout where stdout allows it: a file is
        cut back, a terminal erases it; a pipe keeps it (the retry line says why)."""
        if not self.streamed:
            return
        if self.start is not None:
            self.out.seek(self.start)
            self.out.truncate()
        elif self.out.isatty():
            rows = _rows(self.streamed, _columns(self.out))
            self.out.write("\r" + "\x1b[1A" * (rows - 1) + "\x1b[J")
            self.out.flush()
        else:
            return
        self.streamed, self.mid_line = "", False

    # -- session events -----------------------------------------------------------
    def on_event(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "Tool.Called":
            self.calls[event["call"]["id"]] = event["call"]
        elif kind == "Tool.Result":
            self.tool_line(event)
        elif kind.startswith("LoopGuard."):
            from caretz.ui.guard_lines import headless_line, render_lines

            for text in render_lines(event, self.detailed):
                self.line(f"[magenta]{escape(headless_line(text))}[/]")
        elif kind == "Provider.Error":
            self.told.add(event["error"])
            self.line(f"[red]provider error:[/] {escape(event['error'])}")
        elif kind == "Permission.Decided":
            from caretz.ui.permission_lines import permission_line

            self.line(f"[yellow]{escape(permission_line(event) or '')}[/]")
        else:
            from caretz.ui.notice_lines import notice_lines

            for markup in notice_lines(event, self.detailed):
                self.line(markup)
        for markup in self.checkpoint_lines.render(event):
            self.line(markup)

    def tool_line(self, event: dict[str, Any]) -> None:
        call = self.calls.get(event["call_id"], {"name": event["name"], "arguments": {}})
        mark = "[green]✓[/]" if event["ok"] else "[red]✗[/]"
        preview = escape(call_text(call))
        note = result_note(event)
        status = f" {note}" if note else ""
        self.line(
            f"{mark} [bold]{call['name']}[/] {preview} [dim]({event['duration_s']:.1f}s{status})[/]"
        )
        if not self.detailed:
            return
        if event["ok"] and call["name"] == PLAN_TOOL:
            from caretz.ui.goal_lines import plan_block

            for text in plan_block(call.get("arguments") or {}):
                self.line(f"[dim]{escape(text)}[/]")
        if not event["ok"]:
            for line in output_tail(event.get("output") or ""):
                self.line(line)
        if event.get("diff"):
            for item in diff_view(event["diff"]):
                self.err.print(item)

    def closing(self, summary: dict[str, Any]) -> None:
        usage = summary["usage"]
        cost = summary.get("cost_usd")
        parts = [
            summary["status"],
            plural(summary["tool_calls"], "tool call"),
            f"{usage['input_tokens']:,} in / {usage['output_tokens']:,} out tokens",
        ]
        if usage.get("cache_read_tokens"):
            parts.append(f"{usage['cache_read_tokens']:,} cached")
        parts.append("cost unknown" if cost is None else f"${cost:.4f}")
        parts.append(f"{summary['duration_s']:.1f}s")
        parts.append(f"session {summary['session_id']}")
        message = summary.get("message")
        # A loop-guard stop and a goal's end printed their lines, a provider error its
        # line, when they happened; a usage error is its own `caretz: …` line.
        status = summary["status"]
        shown = status in ("loop_guard", "usage_error") or "goal" in summary
        shown = shown or message in self.told
        if message and not shown:
            self.line(f"[bold]{escape(message)}[/]")
        if summary.get("permission_hint"):
            self.line(f"[yellow]{escape(summary['permission_hint'])}[/]")
        colour = "green" if summary["exit_code"] == 0 else "red"
        self.line(f"[{colour}]●[/] " + escape(" · ".join(parts)))

    def line(self, markup: str) -> None:
        if self.mid_line:
            self.out.write("\n")
            self.out.flush()
            self.mid_line = False
        self.streamed = ""  # text above a line on stderr stays where it is
        self.err.print(hanging(self.err, markup))


def _file_position(out: IO[str]) -> int | None:
    """Where the next write to `out` goes, when `out` is a regular file (else None)."""
    try:
        if not out.seekable():
            return None
        out.flush()
        return out.tell()
    except (OSError, ValueError):
        return None


def _columns(out: IO[str]) -> int:
    try:
        return max(os.get_terminal_size(out.fileno()).columns, 1)
    except (OSError, ValueError):
        return 80


def _rows(text: str, columns: int) -> int:
    """How many terminal rows `text` takes from the start of a row (its last row included)."""
    return sum(max(1, -(-cell_len(line) // columns)) for line in text.split("\n"))


class JsonOutput(QuietListener):
    """`--output json`: every event as a JSON line on stdout, then a result object
    (streamed deltas are not shown: the events carry the whole replies)."""

    def __init__(self, out: IO[str] | None = None):
        self.out = out or sys.stdout

    def on_event(self, event: dict[str, Any]) -> None:
        self.write(event)

    def closing(self, summary: dict[str, Any]) -> None:
        self.write({"type": "result", **summary})

    def write(self, data: dict[str, Any]) -> None:
        self.out.write(json.dumps(data, ensure_ascii=False, default=str) + "\n")
        self.out.flush()
