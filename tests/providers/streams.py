"""Checks shared by the provider tests on a drained stream."""

from __future__ import annotations

from caretz.providers.base import Completed, StreamEvent


def completed(events: list[StreamEvent]) -> Completed:
    """The stream's one `Completed`, which must also be its last event."""
    finals = [e for e in events if isinstance(e, Completed)]
    assert len(finals) == 1 and events[-1] is finals[0]
    return finals[0]
