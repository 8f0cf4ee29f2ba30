"""The view the API gives the application session: every delta and event goes on to the
front end's own view (the CLI's, if any) and, while `stream()` runs, to its queue as the
API's records; the judge's verdicts are kept for the run's result.

The records' module is loaded only when a record is made: the CLI's `-p` makes none
beyond a verdict."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from caretz.lazy import lazy_module
from caretz.session.records.base import LoopGuardRecord, Record

if TYPE_CHECKING:
    from caretz.api import events
    from caretz.session.records import guard as guard_records
else:
    # What stream() yields: loaded when a stream or a verdict needs it, never by a plain -p run.
    events = lazy_module("caretz.api.events")
    # The guard's records: loaded already when one of them is the event read.
    guard_records = lazy_module("caretz.session.records.guard")

if TYPE_CHECKING:
    from caretz.api.events import Event
    from caretz.api.result import GuardVerdict
    from caretz.app.session import View
    from caretz.providers.base import Retrying, Waiting


class Relay:
    def __init__(self, view: View | None = None):
        self.view = view
        self.sink: Callable[[Event], None] | None = None  # set while stream() runs
        self.verdicts: list[GuardVerdict] = []

    def on_response_start(self) -> None:
        if self.view is not None:
            self.view.on_response_start()

    def on_waiting(self, event: Waiting) -> None:
        if self.view is not None:
            self.view.on_waiting(event)

    def on_text(self, text: str) -> None:
        if self.view is not None:
            self.view.on_text(text)
        if self.sink is not None:
            self.sink(events.TextDelta(text))

    def on_thinking(self, text: str) -> None:
        if self.view is not None:
            self.view.on_thinking(text)
        if self.sink is not None:
            self.sink(events.ThinkingDelta(text))

    def on_retry(self, event: Retrying) -> None:
        if self.view is not None:
            self.view.on_retry(event)
        if self.sink is not None:
            self.sink(events.retrying(event))

    def on_event(self, event: Record) -> None:
        if self.view is not None:
            self.view.on_event(event)
        sink = self.sink
        if sink is None and not _is_judged(event):
            return
        verdict = events.guard_verdict(event)
        if verdict is not None:
            self.verdicts.append(verdict)
        if sink is not None:
            sink(events.from_session_event(event))


def _is_judged(event: Record) -> bool:
    """Whether the event is the judge's verdict: the one the relay reads without a stream."""
    if not isinstance(event, LoopGuardRecord):
        return False
    return isinstance(event, guard_records.LoopGuardJudged)
