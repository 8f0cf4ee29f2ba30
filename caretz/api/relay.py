"""The view the API gives the application session: every delta and event goes on to the
front end's own view (the CLI's, if any) and, while `stream()` runs, to its queue as the
API's records; the judge's verdicts are kept for the run's result."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from caretz.api.events import (
    Event,
    TextDelta,
    ThinkingDelta,
    from_session_event,
    guard_verdict,
    retrying,
)
from caretz.api.result import GuardVerdict

if TYPE_CHECKING:
    from caretz.app.session import View
    from caretz.providers.base import Retrying


class Relay:
    def __init__(self, view: View | None = None):
        self.view = view
        self.sink: Callable[[Event], None] | None = None  # set while stream() runs
        self.verdicts: list[GuardVerdict] = []

    def on_response_start(self) -> None:
        if self.view is not None:
            self.view.on_response_start()

    def on_text(self, text: str) -> None:
        if self.view is not None:
            self.view.on_text(text)
        self._send(TextDelta(text))

    def on_thinking(self, text: str) -> None:
        if self.view is not None:
            self.view.on_thinking(text)
        self._send(ThinkingDelta(text))

    def on_retry(self, event: Retrying) -> None:
        if self.view is not None:
            self.view.on_retry(event)
        self._send(retrying(event))

    def on_event(self, event: dict[str, Any]) -> None:
        verdict = guard_verdict(event)
        if verdict is not None:
            self.verdicts.append(verdict)
        if self.view is not None:
            self.view.on_event(event)
        self._send(from_session_event(event))

    def _send(self, record: Event) -> None:
        sink = self.sink
        if sink is not None:
            sink(record)
