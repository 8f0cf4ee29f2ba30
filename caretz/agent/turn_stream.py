"""How a streamed reply can end early inside a turn: the provider refusing a prompt over
the model's window, the loop guard cutting a looping stream, the turn's own cut of an
answer that repeats itself, and closing the stream (which aborts the HTTP request)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from caretz.agent.outcomes import StoppedByGuard
from caretz.guard.text_loop import (
    CUT_NOTICE,
    TextLoopSettings,
    TextLoopWatch,
    loop_headline,
    loop_reason,
)
from caretz.messages import Message, ModelResponse, Usage
from caretz.providers.base import ProviderError, Retrying
from caretz.session.records.base import Record
from caretz.session.records.loop import ProviderRetrying

ABORTED = "aborted"


class PromptTooLong(Exception):
    """The provider refused the request: the prompt is over the model's window."""

    def __init__(self, error: ProviderError):
        super().__init__(str(error))
        self.error = error


class StreamCut(Exception):
    """A looping stream was cut (by the guard, or by the turn's own cut); what streamed
    so far is kept."""

    def __init__(self, partial: str, reason: str):
        super().__init__(reason)
        self.partial = partial
        self.reason = reason

    def response(self, model: str) -> ModelResponse:
        text = f"{self.partial}\n[stream stopped by the loop guard: {self.reason}]"
        return ModelResponse(Message(role="assistant", content=text), Usage(), ABORTED, model)


class TextLoopCut:
    """The turn's own cut of an answer that repeats itself, whatever the loop guard's
    mode: off, shadow, or a model `loopGuard.models` leaves unwatched. Every streamed
    answer of every turn (a subagent's, a goal's) passes `check`. In active mode the
    guard's `stream-text` detector reads the same text first and cuts with its own note,
    so this one acts only where the guard would let the loop run on: it ends the turn."""

    def __init__(self, settings: TextLoopSettings):
        self.watch = TextLoopWatch(settings)
        self.headline: str | None = None  # set once it cut this turn's reply

    def check(self, delta: str, partial: str) -> None:
        """Raises StreamCut once the answer ends in a loop."""
        loop = self.watch.feed(delta)
        if loop is not None:
            self.watch.reset()
            self.headline = loop_headline(loop)
            raise StreamCut(partial, loop_reason(loop))

    def end_turn(self, emit: Callable[[Record], object], mode: str) -> None:
        """After the cut reply was logged: the turn ends (exit 3), with the notice."""
        if self.headline is None:
            return
        # The guard's records load only at a cut: a run whose answers never loop skips them.
        from caretz.session.records.guard import LoopGuardStopped

        emit(
            LoopGuardStopped(
                detector="stream-text", headline=self.headline, mode=mode, notice=CUT_NOTICE
            )
        )
        raise StoppedByGuard(CUT_NOTICE)


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
