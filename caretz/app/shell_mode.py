"""`!command` in an interactive session: a command the user runs, whose output the model
then gets as context.

The command starts the one way every command starts (caretz/tools/process.py): in the
session's sandbox, with the filtered environment, in its own process group, from the
directory the bash tool's commands are in (a `cd` carries over both ways, as between
two bash calls). Nobody is asked: the user typed it. The session's bash timeout, Ctrl-C
and `AppSession.cancel` end its whole group.

Its output goes to the view as it arrives and, cleaned as a model reads command output
(no terminal escapes, `\\r` progress collapsed) and capped like a bash result, waits in
`PendingRuns` (app/pending_runs.py) for the next turn, whose prompt carries "The user ran `cmd` (exit N):" and
the output before what was typed. Each run is a `Shell.Ran` event; runs after a session's
last turn are pending again when it is resumed.
"""

from __future__ import annotations

import queue
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from caretz.agent.signals import Terminated
from caretz.session.records.session import ShellRan
from caretz.tools.base import ToolContext
from caretz.tools.output import HeadTailBuffer, ModelTextStream, PipeReader
from caretz.tools.process import end_group, start_shell
from caretz.tools.workdir import start_dir, take_report, with_report

POLL_S = 0.05
KILL_GRACE_S = 1.0
DRAIN_S = 0.5  # after the command exits, output still in flight


@dataclass(frozen=True, kw_only=True)
class ShellRun:
    """One `!command`: its exit code (None when it did not exit by itself), what ended it
    otherwise ("timeout", "interrupted"), its output as the model reads it."""

    command: str
    exit_code: int | None
    output: str
    duration_s: float
    ended_by: str | None = None

    @property
    def status(self) -> str:
        if self.ended_by == "timeout":
            return f"timed out after {self.duration_s:.0f} s"
        if self.ended_by is not None:
            return f"{self.ended_by} after {self.duration_s:.1f} s"
        return f"exit {self.exit_code}"

    def context(self) -> str:
        """The run as the model reads it, at the start of the next prompt."""
        fence = _fence(self.output)
        body = self.output.rstrip("\n") or "(no output)"
        return f"The user ran `{self.command}` ({self.status}):\n{fence}\n{body}\n{fence}"

    def record(self) -> ShellRan:
        return ShellRan(
            command=self.command,
            exit_code=self.exit_code,
            output=self.output,
            duration_s=round(self.duration_s, 3),
            ended_by=self.ended_by,
        )

    @classmethod
    def from_event(cls, event: ShellRan) -> ShellRun:
        return cls(
            command=event.command,
            exit_code=event.exit_code,
            output=event.output,
            duration_s=event.duration_s,
            ended_by=event.ended_by,
        )


def run_shell(
    command: str, ctx: ToolContext, on_output: Callable[[str], None], emit: Callable[..., Any]
) -> ShellRun:
    """Run `command` as the user, `on_output` called (in this thread) with its output as it
    arrives; its run is logged with `emit`. Ctrl-C ends it and returns the run; SIGTERM or
    SIGHUP end it and go on up. Raises OSError when it cannot start."""
    cwd, _ = start_dir(ctx)
    report = ctx.sandbox.cwd_report(True) if ctx.sandbox is not None else None
    script = with_report(command, report[0]) if report else command
    started = time.monotonic()
    process = start_shell(script, ctx.workspace, ctx.sandbox, cwd=cwd)
    assert process.stdout is not None
    kept = HeadTailBuffer(ctx.output_limit_chars)
    arrived: queue.SimpleQueue[str] = queue.SimpleQueue()

    def add(text: str) -> None:
        kept.add(text)
        arrived.put(text)

    stream = ModelTextStream(add)
    reader = PipeReader(process.stdout, stream.feed)
    deadline = started + ctx.bash_timeout_s
    ended_by: str | None = None
    try:
        reader.start()
        # The wait wakes at the exit; between, every POLL_S to show what arrived.
        while not process.wait_exit(POLL_S):
            _show(arrived, on_output)
            if time.monotonic() >= deadline:
                ended_by = "timeout"
                end_group(process, KILL_GRACE_S)
    except KeyboardInterrupt as stop:
        end_group(process, KILL_GRACE_S)
        run = _finished(command, process.returncode, started, reader, stream, kept, "interrupted")
        _show(arrived, on_output)
        emit(run.record())
        if isinstance(stop, Terminated):
            raise
        return run
    run = _finished(command, process.returncode, started, reader, stream, kept, ended_by)
    _show(arrived, on_output)
    if report is not None and ended_by is None:
        take_report(ctx, report[1])  # a `cd` holds for the next command, the model's too
    emit(run.record())
    return run


def _finished(
    command: str,
    code: int | None,
    started: float,
    reader: PipeReader,
    stream: ModelTextStream,
    kept: HeadTailBuffer,
    ended_by: str | None,
) -> ShellRun:
    reader.join(DRAIN_S)
    stream.flush()
    duration = time.monotonic() - started
    exit_code = code if ended_by is None else None
    return ShellRun(
        command=command,
        exit_code=exit_code,
        output=kept.render(),
        duration_s=duration,
        ended_by=ended_by,
    )


def _show(arrived: queue.SimpleQueue[str], on_output: Callable[[str], None]) -> None:
    """Hand what arrived to the view."""
    pieces = []
    try:
        while True:
            pieces.append(arrived.get_nowait())
    except queue.Empty:
        pass
    if pieces:
        on_output("".join(pieces))


def _fence(output: str) -> str:
    """A code fence longer than any run of backticks in `output`."""
    longest = max((len(run) for run in re.findall(r"`+", output)), default=0)
    return "`" * max(3, longest + 1)
