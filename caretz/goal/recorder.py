"""The record of a turn the goal evaluator reads, kept from the session's events.

The loop guard keeps a `TurnRecord` of the turns it watches; a goal needs one for
every turn, with the guard off or on another model too. So the recorder listens to
the session log, as the views do, and feeds the same record the same observations:
the summary machinery is the guard's, the turn loop is untouched.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from caretz.guard.model import ToolObservation, TurnContext
from caretz.guard.record import TurnRecord
from caretz.messages import Message, Usage
from caretz.plan import Plan


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
        self._calls: dict[str, dict[str, Any]] = {}

    def __call__(self, event: dict[str, Any]) -> None:
        if event.get("agent", "main") != self.agent:
            return
        kind = event.get("type")
        if kind == "Turn.Started":
            self._start(event)
        elif self.record is None:
            return
        elif kind == "Tool.Called":
            call = event["call"]
            self._calls[call["id"]] = call
        elif kind == "Tool.Result":
            self.record.add_call(self._observation(event))
        elif kind == "Model.Response":
            message = Message.from_dict(event["message"])
            self.record.add_response(message, Usage.from_dict(event.get("usage") or {}))

    def _start(self, event: dict[str, Any]) -> None:
        ctx = TurnContext(
            task=event.get("prompt", ""),
            model_ref=event.get("model", ""),
            from_user=event.get("from_user", True),
            plan=self.plan(),
        )
        self.record = TurnRecord.start(ctx, self.clock)
        self._calls = {}

    def _observation(self, event: dict[str, Any]) -> ToolObservation:
        call = self._calls.get(event.get("call_id", ""), {})
        return ToolObservation(
            index=int(event.get("index", 0)),
            tool=event.get("name", call.get("name", "?")),
            args=call.get("arguments") or {},
            output=event.get("output", ""),
            failed=not event.get("ok", False),
            exit_code=event.get("exit_code"),
            duration_s=float(event.get("duration_s", 0.0)),
            files_changed=tuple(event.get("files_changed", ())),
        )
