"""The `!command` runs since the last turn (app/shell_mode.py), which the next prompt
carries; a resumed session's are read back from its log. Apart from the shell mode, so a
session that runs no `!command` loads none of it."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from caretz.lazy import lazy_module
from caretz.session.events import read_events
from caretz.session.records.loop import TurnStarted
from caretz.session.records.session import ShellRan

if TYPE_CHECKING:
    from caretz.app import shell_mode
else:
    shell_mode = lazy_module("caretz.app.shell_mode")  # a resumed session's runs only

if TYPE_CHECKING:
    from caretz.app.shell_mode import ShellRun


class PendingRuns:
    """The runs since the last turn, which the next prompt carries."""

    def __init__(self, runs: Iterable[ShellRun] = ()):
        self.runs = list(runs)

    def add(self, run: ShellRun) -> None:
        self.runs.append(run)

    def prompt(self, typed: str) -> str:
        """`typed`, after the pending runs (which are then taken)."""
        runs, self.runs = self.runs, []
        if not runs:
            return typed
        return "\n\n".join([*(run.context() for run in runs), typed])

    @classmethod
    def logged(cls, events_path: Path) -> PendingRuns:
        """The runs a session's log holds after its last turn began (a resumed session's)."""
        runs: list[ShellRun] = []
        if not events_path.is_file():
            return cls()
        for event in read_events(events_path):
            if isinstance(event, TurnStarted) and event.agent == "main":
                runs = []
            elif isinstance(event, ShellRan):
                runs.append(shell_mode.ShellRun.from_event(event))
        return cls(runs)
