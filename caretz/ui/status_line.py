"""The status line: the profile's `statusLine` command, its first line of output shown
in the interactive session's bottom toolbar.

The command is the user's own, so it runs as the user's hooks do (hooks/runner.py's
`run_command`, through tools/process.py's `start_process`): in the session's sandbox,
from the project's folder, with the filtered environment, in a process group of its
own that ends at its timeout. It gets the session as JSON on stdin (app/status_input.py).

It runs in a worker thread, never in the prompt's: each event of the session's log asks
for a refresh, the requests that come within `DEBOUNCE_S` of one another make one run,
and the toolbar shows the last line a run gave. A run that fails, prints nothing or
passes its timeout leaves the line empty, with no error (a broken script would
otherwise print one at every refresh).
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from caretz.app.status_input import status_input
from caretz.config.sandbox import shell_env_filter
from caretz.hooks.runner import HookEnvironment, run_command

if TYPE_CHECKING:
    from caretz.app.session import AppSession
    from caretz.config.values import StatusLineValues

DEBOUNCE_S = 0.3  # Claude Code's: at most one run every 300 ms
MAX_CHARS = 500
# Terminal control sequences and characters: the toolbar draws plain text.
_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|[\x00-\x1f\x7f]")


class StatusLine:
    """The last line the command printed, refreshed in the background."""

    def __init__(
        self,
        config: StatusLineValues,
        redraw: Callable[[], None],
        clock: Callable[[], float] = time.monotonic,
    ):
        self.config = config
        self.redraw = redraw  # asks the prompt to draw its toolbar again
        self.clock = clock
        self.started = clock()
        self.text = ""
        self.session: AppSession | None = None
        self.context_tokens: Callable[[], int] = lambda: 0
        self._wanted = threading.Event()
        self._closed = False
        self._worker: threading.Thread | None = None

    def follow(self, session: AppSession, context_tokens: Callable[[], int]) -> None:
        """Show `session` (a new one after /clear or /resume), refreshed at its events."""
        if session is not self.session:
            if self.session is not None:
                self.session.log.unsubscribe(self.on_event)
            session.log.subscribe(self.on_event)
            self.session, self.context_tokens = session, context_tokens
        self.refresh()

    def on_event(self, record: object) -> None:
        self.refresh()

    def refresh(self) -> None:
        """Ask for a run; returns at once."""
        self._wanted.set()
        if self._worker is None:
            self._worker = threading.Thread(target=self._work, name="status-line", daemon=True)
            self._worker.start()

    def close(self) -> None:
        self._closed = True
        self._wanted.set()
        if self.session is not None:
            self.session.log.unsubscribe(self.on_event)

    def _work(self) -> None:
        while not self._closed:
            self._wanted.wait()
            time.sleep(DEBOUNCE_S)  # what comes meanwhile joins this run
            self._wanted.clear()
            if self._closed:
                return
            text = self.run_once()
            if text != self.text:
                self.text = text
                self.redraw()

    def run_once(self) -> str:
        """One run of the command: its first line, or "" when it failed."""
        session = self.session
        if session is None or session.sandbox is None:
            return ""
        try:
            payload = status_input(session, self.context_tokens(), self.clock() - self.started)
            ran = run_command(
                self.config.command, payload, self.environment(session), self.config.timeout_s
            )
        except Exception:  # noqa: BLE001 - a status line never breaks the prompt
            return ""
        if ran.exit_code != 0:
            return ""
        return first_line(ran.stdout)

    def environment(self, session: AppSession) -> HookEnvironment:
        assert session.sandbox is not None
        variables = shell_env_filter(session.settings).apply(os.environ)
        return HookEnvironment(session.workspace, variables, session.sandbox)


def first_line(output: str) -> str:
    """The first line that says something, without control sequences, cut to MAX_CHARS."""
    for line in output.splitlines():
        shown = _CONTROL.sub("", line).strip()
        if shown:
            return shown[:MAX_CHARS]
    return ""


def following(
    current: StatusLine | None, config: StatusLineValues | None, redraw: Callable[[], None]
) -> StatusLine | None:
    """The status line for the profile's `config` now (None: the profile has none):
    `current` while its command is the same, else a new one (`current` closed)."""
    if current is not None and current.config == config:
        return current
    if current is not None:
        current.close()
    return StatusLine(config, redraw) if config is not None else None
