"""Headless output: streamed text on stdout, one line per tool call and guard event on stderr.

Rich decides colour: none when piped or when NO_COLOR is set. Drawing in place (the
answer's Markdown, the spinner, wrapped lines indented under their mark) happens only on
a real terminal (`wrapping.draws_in_place`); piped or redirected, nothing is redrawn.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any

from rich.console import Console, RenderableType
from rich.markup import escape

from caretz.agent.parts import QuietListener
from caretz.lazy import lazy_module
from caretz.plan import PLAN_TOOL
from caretz.providers.base import Retrying, Waiting
from caretz.session.records import loop
from caretz.session.records.base import CheckpointRecord, LoopGuardRecord, PermissionRecord
from caretz.text import one_line, plural, shorten
from caretz.ui.answer import PlainAnswer, TerminalAnswer
from caretz.ui.job_lines import background_job, job_started_line
from caretz.ui.notice_lines import notice_lines
from caretz.ui.wrapping import draws_in_place, hanging

if TYPE_CHECKING:
    from rich import syntax as rich_syntax

    from caretz.ui import checkpoint_lines, goal_lines, guard_lines, permission_lines
    from caretz.ui import progress as ui_progress
else:
    goal_lines = lazy_module("caretz.ui.goal_lines")  # the plan's lines: once the agent plans
    # Rich's spinner: once a tool runs, on a terminal
    ui_progress = lazy_module("caretz.ui.progress")
    rich_syntax = lazy_module("rich.syntax")  # pygments' lexers: only with a diff to show
    permission_lines = lazy_module("caretz.ui.permission_lines")  # once a rule or an answer decides
    guard_lines = lazy_module("caretz.ui.guard_lines")  # the guard's lines: once it says something
    checkpoint_lines = lazy_module("caretz.ui.checkpoint_lines")  # at the first checkpoint record

Clock = Callable[[], float]

if TYPE_CHECKING:
    from caretz.session.records.base import Record
    from caretz.session.records.session import CommandRan
    from caretz.ui.checkpoint_lines import CheckpointLines
    from caretz.ui.progress import ProgressLine

_ARG_PREVIEW = 80
DIFF_MAX_LINES = 40  # an edit's diff in the live view and `--output detailed`
SHORT_DIFF_LINES = 12  # and in `-p`'s default view
FAILED_OUTPUT_LINES = 3
OUTPUT_LINE_CHARS = 200  # a failed command's output line, shortened to this
_EXIT_NOTE = re.compile(r"\[exit code -?\d+\]")


WAITING = "the model"  # the spinner's key for the wait for a reply (tool calls use their ids)
WAIT_NOTICE_S = 15.0  # piped: one line when no answer has come after this long


def waiting_line(event: Waiting) -> str:
    """The line a run without a spinner prints once while no answer comes (markup)."""
    return (
        f"[yellow]waiting for the model ({event.waited_s:.0f}s)[/]: no answer yet; "
        f"given up at {event.limit_s:g}s (firstByteTimeout)"
    )


def retry_line(event: Retrying) -> str:
    """The line that says a request is sent again, and why (markup)."""
    line = f"[yellow]retrying in {event.delay_s:g}s[/] ({escape(event.reason)})"
    return line + ": the reply starts over" if event.discarded is not None else line


def call_preview(name: str, arguments: dict[str, Any]) -> str:
    """The one argument that says most about a call (the command, the path, the pattern)."""
    if name == PLAN_TOOL:
        return goal_lines.plan_preview(arguments)
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


def result_note(event: loop.ToolReturned | CommandRan) -> str:
    """What a tool line says after the duration: how a failed call ended, if it did not
    simply exit non-zero; the exit code otherwise."""
    ended = event.ended_by
    if ended:
        return ENDINGS.get(ended, ended)
    code = event.exit_code
    return f"exit {code}" if not event.ok and code else ""


def call_text(call: dict[str, Any]) -> str:
    """A logged call's preview; arguments that were not a JSON object show as they were sent."""
    raw = call.get("raw_arguments")
    if raw is not None:
        return one_line(raw, _ARG_PREVIEW) or "(no arguments)"
    return call_preview(call["name"], call.get("arguments") or {})


def output_tail(output: str) -> list[str]:
    """The last lines of a failed command's output, as dim markup lines, under a line
    that counts the ones left out."""
    lines = [
        line
        for line in output.rstrip().splitlines()
        if line.strip() and not _EXIT_NOTE.fullmatch(line.strip())  # the tool line says the exit
    ]
    left_out = len(lines) - FAILED_OUTPUT_LINES
    tail = [f"  [dim]│ … {plural(left_out, 'earlier line')}[/]"] if left_out > 0 else []
    return tail + [
        f"  [dim]│ {escape(shorten(line, OUTPUT_LINE_CHARS))}[/]"
        for line in lines[-FAILED_OUTPUT_LINES:]
    ]


def diff_view(diff: str, most: int = DIFF_MAX_LINES) -> list[RenderableType]:
    """An edit's diff, coloured where colour is on, cut to its first `most` lines."""
    lines = diff.rstrip("\n").splitlines()
    shown = "\n".join(lines[:most])
    view: list[RenderableType] = [
        rich_syntax.Syntax(
            shown, "diff", theme="ansi_dark", background_color="default", word_wrap=True
        )
    ]
    if len(lines) > most:
        view.append(f"  [dim]… {len(lines) - most} more diff lines[/]")
    return view


class TextOutput:
    """The human view of a headless run (`--output text` or `detailed`).

    On a terminal the answer is drawn as Markdown and a spinner on stderr says which tool
    call runs; piped or redirected, stdout is the answer's raw text and stderr plain lines.
    """

    def __init__(
        self,
        detailed: bool = False,
        out: IO[str] | None = None,
        err: Console | None = None,
        clock: Clock = time.monotonic,
    ):
        self.detailed = detailed
        self.out = out or sys.stdout
        self.err = err or Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)
        self.calls: dict[str, dict[str, Any]] = {}
        self.told: set[str] = set()  # provider errors printed as they happened
        self.checkpoint_lines: CheckpointLines | None = None  # from the first checkpoint
        self.answer = answer_writer(self.out, clock)
        self.clock = clock
        self.spins = draws_in_place(self.err)  # a spinner while the model or a tool call runs
        self.progress: ProgressLine | None = None  # built by the first spinner
        self.wait_told = False  # piped: the line about a slow answer was printed

    # -- streamed deltas (TurnListener) -----------------------------------------
    def on_response_start(self) -> None:
        self.answer.begin()
        self.wait_told = False
        self.spin(WAITING, "waiting for the model")

    def on_waiting(self, event: Waiting) -> None:
        """No answer yet: a terminal's spinner counts the seconds by itself; piped, one
        line once the wait is long (before firstByteTimeout gives the attempt up)."""
        if self.spins or self.wait_told:
            return
        if event.waited_s >= min(WAIT_NOTICE_S, event.limit_s / 2):
            self.wait_told = True
            self.line(waiting_line(event))

    def on_text(self, text: str) -> None:
        self.answered()
        self.answer.write(text)

    def on_thinking(self, text: str) -> None:
        running = self.progress.running.get(WAITING) if self.progress is not None else None
        if running is not None and running.label != "thinking":
            self.spin(WAITING, "thinking")

    def answered(self) -> None:
        """The reply began (or the request ended): the wait's spinner goes."""
        if self.progress is not None:
            self.progress.ended(WAITING)

    def on_retry(self, event: Retrying) -> None:
        if event.discarded is not None:
            self.answer.take_back()
        self.line(retry_line(event))

    # -- session events -----------------------------------------------------------
    def on_event(self, event: Record) -> None:
        if isinstance(event, loop.ModelReplied | loop.ProviderFailed | loop.ToolCalled):
            self.answered()
        if isinstance(event, loop.ToolCalled):
            self.tool_called(event.call)
        elif isinstance(event, loop.ToolReturned):
            if self.progress is not None:
                self.progress.ended(event.call_id)
            self.tool_line(event)
        elif isinstance(event, loop.TurnEnded) and event.agent == "main":
            self.stop_progress()
        elif isinstance(event, LoopGuardRecord):
            for text in guard_lines.render_lines(event, self.detailed):
                self.line(f"[magenta]{escape(guard_lines.headless_line(text))}[/]")
        elif isinstance(event, loop.ProviderFailed):
            self.told.add(event.error)
            self.line(f"[red]provider error:[/] {escape(event.error)}")
        elif isinstance(event, PermissionRecord):  # Decided: a line; Asked: none headless
            line = permission_lines.decided_line(event)
            if line is not None:
                self.line(f"[yellow]{escape(line)}[/]")
        else:
            for markup in notice_lines(event, self.detailed, headless=True):
                self.line(markup)
        if self.checkpoint_lines is None and isinstance(event, CheckpointRecord):
            self.checkpoint_lines = checkpoint_lines.CheckpointLines()
        if self.checkpoint_lines is not None:
            for markup in self.checkpoint_lines.render(event):
                self.line(markup)

    def tool_called(self, call: dict[str, Any]) -> None:
        self.calls[call["id"]] = call
        self.spin(call["id"], f"{call['name']} {call_text(call)}")

    def spin(self, key: str, label: str) -> None:
        """On a terminal, the spinner says `label` for `key` (a call, or the model)."""
        if not self.spins:
            return
        if self.progress is None:
            self.progress = ui_progress.ProgressLine(self.err, self.clock)
        self.answer.settle()  # the spinner goes below the answer so far
        self.progress.started(key, label)

    def tool_line(self, event: loop.ToolReturned) -> None:
        call = self.calls.get(event.call_id, {"name": event.name, "arguments": {}})
        job = background_job(call, event)
        if job is not None:
            self.line(job_started_line(job, call, "stopped when the run ends"))
            return
        mark = "[green]✓[/]" if event.ok else "[red]✗[/]"
        preview = escape(call_text(call))
        note = result_note(event)
        status = f" {note}" if note else ""
        self.line(
            f"{mark} [bold]{call['name']}[/] {preview} [dim]({event.duration_s:.1f}s{status})[/]"
        )
        if self.detailed and event.ok and call["name"] == PLAN_TOOL:
            for text in goal_lines.plan_block(call.get("arguments") or {}):
                self.line(f"[dim]{escape(text)}[/]")
        if not event.ok:
            for line in output_tail(event.output or ""):
                self.line(line)
        if event.diff:
            shown = DIFF_MAX_LINES if self.detailed else SHORT_DIFF_LINES
            for item in diff_view(event.diff, shown):
                self.err.print(item)

    def closing(self, summary: dict[str, Any]) -> None:
        self.stop_progress()
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

    def stop_progress(self) -> None:
        if self.progress is not None:
            self.progress.stop()

    def line(self, markup: str) -> None:
        self.answer.settle()  # the answer so far stays above a line on stderr
        self.err.print(hanging(self.err, markup))


def answer_writer(out: IO[str], clock: Clock) -> PlainAnswer | TerminalAnswer:
    """Markdown redrawn in place on a terminal; the raw text anywhere else."""
    console = Console(file=out, highlight=False, emoji=False)
    if draws_in_place(console):
        return TerminalAnswer(console, clock)
    return PlainAnswer(out)


class JsonOutput(QuietListener):
    """`--output json`: every event as a JSON line on stdout, then a result object
    (streamed deltas are not shown: the events carry the whole replies)."""

    def __init__(self, out: IO[str] | None = None):
        self.out = out or sys.stdout

    def on_event(self, event: Record) -> None:
        self.write(event.to_dict())

    def closing(self, summary: dict[str, Any]) -> None:
        self.write({"type": "result", **summary})

    def write(self, data: dict[str, Any]) -> None:
        self.out.write(json.dumps(data, ensure_ascii=False, default=str) + "\n")
        self.out.flush()
