"""How a streamed reply can end early inside a turn: the provider refusing a prompt over
the model's window, the loop guard cutting a looping stream, and closing the stream
(which aborts the HTTP request)."""

from __future__ import annotations

from collections.abc import Iterator

from caretz.messages import Message, ModelResponse, Usage
from caretz.providers.base import ProviderError, Retrying
from caretz.session.records.loop import ProviderRetrying

ABORTED = "aborted"


class PromptTooLong(Exception):
    """The provider refused the request: the prompt is over the model's window."""

    def __init__(self, error: ProviderError):
        super().__init__(str(error))
        self.error = error


class StreamCut(Exception):
    """The guard cut a looping stream; what streamed so far is kept."""

    def __init__(self, partial: str, reason: str):
        super().__init__(reason)
        self.partial = partial
        self.reason = reason

    def response(self, model: str) -> ModelResponse:
        text = f"{self.partial}\n[stream stopped by the loop guard: {self.reason}]"
        return ModelResponse(Message("assistant", text), Usage(), ABORTED, model)


def retrying_record(event: Retrying) -> ProviderRetrying:
    """The log's record of a retry (with the partial reply it discards, if any)."""
    discarded = event.discarded.to_dict() if event.discarded is not None else None
    return ProviderRetrying(
        attempt=event.attempt, delay_s=event.delay_s, reason=event.reason, discarded=discarded
    )


def close_stream(events: Iterator[object]) -> None:
    close = getattr(events, "close", None)
    if close is not None:
        close()
