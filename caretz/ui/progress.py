"""The spinner line: what runs and for how long, redrawn in place on a terminal.

`Status` is the line itself (the live view draws it under the streamed answer);
`ProgressLine` is `-p`'s: on stderr while a tool call runs, erased when it ends, and
only ever built for a real terminal (`wrapping.draws_in_place`), so a pipe, a file or
`--output json` never gets a spinner or a cursor movement.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.console import Console, ConsoleOptions, RenderResult
from rich.spinner import Spinner
from rich.text import Text

from caretz.lazy import lazy_module

if TYPE_CHECKING:
    from rich import live as rich_live
else:
    rich_live = lazy_module("rich.live")  # only a terminal's run draws a spinner

if TYPE_CHECKING:
    from rich.live import Live

Clock = Callable[[], float]


class Status:
    """A spinner with a label and the time it has been running."""

    def __init__(self, label: str, clock: Clock):
        self.label = label
        self.clock = clock
        self.started = clock()
        self.spinner = Spinner("dots", style="cyan")

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        elapsed = self.clock() - self.started
        self.spinner.text = Text.assemble(
            (self.label, "cyan"), (f"  {elapsed:.0f}s · Ctrl-C to stop", "dim")
        )
        yield self.spinner


class ProgressLine:
    """The spinner `-p` draws on a terminal's stderr while tool calls run.

    Calls can overlap (read-only calls run together, a subagent's inside `task`), so it
    shows the newest call still running, with that call's own elapsed time; it is
    erased once none runs.
    """

    def __init__(self, console: Console, clock: Clock = time.monotonic):
        self.console = console
        self.clock = clock
        self.running: dict[str, Status] = {}  # by call id, oldest first
        self.live: Live | None = None

    def started(self, call_id: str, label: str) -> None:
        self.running[call_id] = Status(label, self.clock)
        self.show()

    def ended(self, call_id: str) -> None:
        if self.running.pop(call_id, None) is not None:
            self.show()

    def stop(self) -> None:
        """Erase the line, whatever still runs (the turn or the run has ended)."""
        self.running.clear()
        self.show()

    def show(self) -> None:
        if not self.running:
            live, self.live = self.live, None
            if live is not None:
                live.stop()  # transient: the line is erased
            return
        newest = next(reversed(self.running.values()))
        if self.live is not None:
            self.live.update(newest, refresh=True)
            return
        self.live = rich_live.Live(
            newest,
            console=self.console,
            refresh_per_second=10,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self.live.start(refresh=True)
