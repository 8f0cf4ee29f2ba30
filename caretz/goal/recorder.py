"""The record of a turn the goal evaluator reads, kept from the session's events.

The loop guard keeps a `TurnRecord` of the turns it watches; a goal needs one for
every turn, with the guard off or on another model too. So the recorder listens to
the session log, as the views do, and feeds the same record the same observations:
the summary machinery is the guard's, the turn loop is untouched.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from caretz.guard.model import ToolObservation, TurnContext
from caretz.guard.record import TurnRecord
from caretz.messages import Message, ToolCall, Usage
from caretz.plan import Plan
from caretz.session.records.base import LoopRecord, Record
from caretz.session.records.loop import (
    ModelReplied,
    ToolCalled,
    ToolReturned,
    TurnStarted,
)


class TurnRecorder:
    """An event listener: the record of `agent`'s latest turn (subagents' events aside)."""

    def __init__(
        self,
        agent: str = "main",
        plan: Callable[[], Plan] = tuple,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.agent = agent
        self.plan = plan  # the agent's plan as a turn starts
        self.clock = clock
        self.record: TurnRecord | None = None
        self._calls: dict[str, ToolCall] = {}

    def __call__(self, event: Record) -> None:
        if not isinstance(event, LoopRecord) or event.agent != self.agent:
            return
        if isinstance(event, TurnStarted):
            self._start(event)
        elif self.record is None:
            return
        elif isinstance(event, ToolCalled):
            call = ToolCall.from_dict({"id": "", "name": "unknown", **event.call})
            self._calls[call.id] = call
        elif isinstance(event, ToolReturned):
            made = self._calls.get(event.call_id)
            self.record.add_call(ToolObservation.from_record(event, made))
        elif isinstance(event, ModelReplied):
            message = Message.from_dict(event.message)
            self.record.add_response(message, Usage.from_dict(event.usage or {}))

    def _start(self, event: TurnStarted) -> None:
        ctx = TurnContext(
            task=event.prompt,
            model_ref=event.model,
            from_user=event.from_user,
            plan=self.plan(),
        )
        self.record = TurnRecord.start(ctx, self.clock)
        self._calls = {}
