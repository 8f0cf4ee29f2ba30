"""The interactive session's view of a turn, drawn with Rich.

While the model works, a spinner says what is happening. Assistant text streams
in as it arrives and is drawn as Markdown: lines that can no longer change are
printed for good, and only the last few (which the next delta may still change)
live in a small region that is redrawn. Tool calls become one line each with
their status and duration, edits show their diff, and the loop guard's
`[loop-guard]` lines appear as they happen.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

from rich.console import Console, ConsoleOptions, RenderResult
from rich.live import Live
from rich.markup import escape

from caretz.plan import PLAN_TOOL
from caretz.providers.base import Retrying, Waiting
from caretz.session.records import loop
from caretz.session.records.base import GoalRecord, LoopGuardRecord, LoopRecord, Record
from caretz.session.records.goal import GoalEvaluating
from caretz.session.records.permissions import PermissionDecided
from caretz.session.records.session import ModelSummary, SessionCompacted
from caretz.ui.checkpoint_lines import CheckpointLines
from caretz.ui.console import call_text, diff_view, output_tail, result_note, retry_line
from caretz.ui.goal_lines import plan_block
from caretz.ui.guard_lines import render_lines
from caretz.ui.job_lines import background_job, job_started_line
from caretz.ui.markdown import Clock, Lines, MarkdownStream, erase_printed
from caretz.ui.markdown import WrappingMarkdown as WrappingMarkdown  # imported from here too
from caretz.ui.notice_lines import notice_lines
from caretz.ui.permission_lines import permission_line
from caretz.ui.progress import Status
from caretz.ui.wrapping import hanging


class _Region:
    """What the redrawn region shows: the streamed tail, then the spinner."""

    def __init__(self) -> None:
        self.tail: Lines | None = None
        self.status: Status | None = None

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self.tail is not None:
            yield self.tail
        if self.status is not None:
            yield self.status


class LiveView:
    """A TurnListener and event subscriber for the interactive session."""

    def __init__(self, console: Console, detailed: bool = False, clock: Clock = time.monotonic):
        self.console = console
        self.detailed = detailed
        self.clock = clock
        self.calls: dict[str, dict[str, Any]] = {}
        self.told: set[str] = set()  # provider errors printed as they happened
        self.running: dict[str, Any] | None = None  # the tool call now running
        self.stream: MarkdownStream | None = None
        self.region = _Region()
        self.live: Live | None = None
        self.checkpoint_lines = CheckpointLines(interactive=True)

    # -- a turn's lifetime ----------------------------------------------------------
    def begin_turn(self) -> None:
        self.calls, self.running = {}, None
        self.start_live()

    def start_live(self) -> None:
        self.live = Live(
            self.region,
            console=self.console,
            refresh_per_second=10,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self.live.start()

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Stop redrawing while something else uses the terminal (the approval prompt);
        the spinner and the streamed tail come back afterwards."""
        live, self.live = self.live, None
        if live is None:
            yield
            return
        self.finish_stream()  # what streamed so far is printed for good, above the prompt
        live.stop()
        try:
            yield
        finally:
            self.start_live()

    def end_turn(self, status: str = "done") -> None:
        """Print what is still pending and stop redrawing; safe to call twice."""
        try:
            self.finish_stream()
            if self.running is not None and status == "interrupted":
                self.tool_line(self.running, ok=False, note="cancelled, process group killed")
            self.running = None
            self.set_status(None)
        finally:
            live, self.live = self.live, None
            if live is not None:
                live.stop()

    # -- streamed deltas (TurnListener) -----------------------------------------------
    def on_response_start(self) -> None:
        self.set_status("waiting for the model")

    def on_waiting(self, event: Waiting) -> None:
        pass  # the spinner counts the seconds itself

    def on_text(self, text: str) -> None:
        if self.stream is None:
            self.stream = MarkdownStream(self.console, self.clock)
            self.set_status("writing")
        tail = self.stream.tail
        self.stream.add(text)
        if self.stream.tail is not tail:  # re-rendered (at most every RENDER_INTERVAL_S)
            self.region.tail = self.stream.tail
            self.refresh()

    def on_thinking(self, text: str) -> None:
        if self.region.status is None or self.region.status.label != "thinking":
            self.set_status("thinking")

    def on_retry(self, event: Retrying) -> None:
        if event.discarded is not None:
            self.discard_stream()
        self.print(retry_line(event))

    # -- session events ---------------------------------------------------------------
    def on_event(self, event: Record) -> None:
        of_an_agent = LoopRecord | SessionCompacted | ModelSummary
        if isinstance(event, of_an_agent) and event.agent != "main":  # a subagent's
            return
        self.on_session_event(event)
        for markup in self.checkpoint_lines.render(event):
            self.print(markup)

    def on_session_event(self, event: Record) -> None:
        if isinstance(event, loop.ModelReplied):
            self.on_response(event)
        elif isinstance(event, loop.ToolCalled):
            call = event.call
            self.calls[call["id"]] = call
            self.running = call
            preview = call_text(call)
            self.set_status(f"{call['name']} {preview}")
        elif isinstance(event, loop.ToolReturned):
            self.on_tool_result(event)
        elif isinstance(event, LoopGuardRecord):
            for line in render_lines(event, self.detailed):
                self.print(f"[magenta]{escape(line)}[/]")
        elif isinstance(event, loop.ProviderFailed):
            self.told.add(event.error)
            self.print(f"[red]provider error:[/] {escape(event.error)}")
        elif isinstance(event, PermissionDecided):
            line = permission_line(event) or ""
            self.print(f"[{'green' if event.answer != 'no' else 'yellow'}]{escape(line)}[/]")
        elif isinstance(event, GoalEvaluating):
            self.set_status("checking the goal")
        else:
            if isinstance(event, GoalRecord):
                self.set_status(None)
            for markup in notice_lines(event, self.detailed):
                self.print(markup)

    def on_response(self, event: loop.ModelReplied) -> None:
        content = event.message.get("content") or ""
        if self.stream is None and content.strip():
            self.on_text(content)  # nothing streamed (a provider that sends it whole)
        self.finish_stream()
        self.set_status(None)

    def on_tool_result(self, event: loop.ToolReturned) -> None:
        call = self.calls.get(event.call_id, {"name": event.name, "arguments": {}})
        self.running = None
        self.set_status(None)
        job = background_job(call, event)
        if job is not None:
            self.print(job_started_line(job, call, f"/jobs stop {job} stops it"))
            return
        self.tool_line(call, event.ok, result_note(event), event.duration_s)
        if not event.ok:
            for line in output_tail(event.output or ""):
                self.print(line)
        elif call["name"] == PLAN_TOOL:
            for line in plan_block(call.get("arguments") or {}):
                self.print(f"[dim]{escape(line)}[/]")
        if event.diff:
            for item in diff_view(event.diff):
                self.console.print(item)

    # -- drawing ----------------------------------------------------------------------------
    def tool_line(
        self, call: dict[str, Any], ok: bool, note: str = "", duration: float | None = None
    ) -> None:
        mark = "[green]✓[/]" if ok else "[red]✗[/]"
        preview = escape(call_text(call))
        details = [f"{duration:.1f}s"] if duration is not None else []
        details += [note] if note else []
        suffix = f" [dim]({escape(', '.join(details))})[/]" if details else ""
        self.print(f"{mark} [bold]{escape(call['name'])}[/] {preview}{suffix}")

    def discard_stream(self) -> None:
        """Take a reply that broke off off the screen: a retry streams it again."""
        stream, self.stream = self.stream, None
        self.region.tail = None
        printed = stream.printed if stream is not None else 0
        if printed and self.live is not None and self.console.is_terminal:
            self.live.stop()  # clears the redrawn region; the printed lines sit just above it
            erase_printed(self.console, printed)
            self.start_live()
        self.refresh()

    def finish_stream(self) -> None:
        self.region.tail = None  # the tail is printed for good below; never draw it twice
        if self.stream is not None:
            self.stream.finish()
            self.stream = None
        self.refresh()

    def set_status(self, label: str | None) -> None:
        self.region.status = Status(label, self.clock) if label else None
        self.refresh()

    def refresh(self) -> None:
        if self.live is not None:
            self.live.refresh()

    def print(self, markup: str) -> None:
        self.console.print(hanging(self.console, markup), highlight=False, soft_wrap=True)
