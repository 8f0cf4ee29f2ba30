"""Hooks written with `async: true`: each runs on a thread of its own while the session
goes on, so its answer cannot decide anything.

What one said is logged (a `Hook.Ran` event) from the session's own thread, the next
time the session runs a hook or when it ends, so the log is never written from two
threads. When the session ends, hooks still running get `END_GRACE_S` to finish, then
their process groups are ended.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from caretz.hooks.config import HookEvent
from caretz.hooks.matching import ConfiguredHook
from caretz.hooks.runner import KILL_GRACE_S, CommandRun
from caretz.tools.process import end_group

END_GRACE_S = 5.0  # what hooks still running get when the session ends

RunCommand = Callable[[Callable[[subprocess.Popen[bytes]], None]], CommandRun]


@dataclass(kw_only=True)
class BackgroundRun:
    """One hook running in the background, and how it ran once it has."""

    hook: ConfiguredHook
    event: HookEvent
    about: str | None
    process: subprocess.Popen[bytes] | None = None
    ran: CommandRun | None = None
    thread: threading.Thread | None = field(default=None, repr=False)


class BackgroundHooks:
    """The session's hooks running in the background."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.runs: list[BackgroundRun] = []
        self.clock = clock
        self._lock = threading.Lock()

    def start(
        self, hook: ConfiguredHook, event: HookEvent, about: str | None, run: RunCommand
    ) -> BackgroundRun:
        entry = BackgroundRun(hook=hook, event=event, about=about)

        def work() -> None:
            ran = run(lambda process: setattr(entry, "process", process))
            with self._lock:
                entry.ran = ran

        entry.thread = threading.Thread(target=work, name="caretz-hook", daemon=True)
        with self._lock:
            self.runs.append(entry)
        entry.thread.start()
        return entry

    def finished(self) -> list[BackgroundRun]:
        """The runs that ended since the last call, in the order they started."""
        with self._lock:
            done = [entry for entry in self.runs if entry.ran is not None]
            self.runs = [entry for entry in self.runs if entry.ran is None]
        return done

    def end(self, grace_s: float = END_GRACE_S) -> list[BackgroundRun]:
        """Wait up to `grace_s` for the runs still going, end the groups of the rest;
        returns every run that had not been collected."""
        deadline = self.clock() + grace_s
        for entry in list(self.runs):
            if entry.thread is not None:
                entry.thread.join(max(0.0, deadline - self.clock()))
        for entry in list(self.runs):
            if entry.thread is not None and entry.thread.is_alive():
                if entry.process is not None:
                    end_group(entry.process, KILL_GRACE_S)
                entry.thread.join(KILL_GRACE_S + 1.0)
        return self.finished()
