"""Where the turn loop meets the loop guard: events in, decisions out.

The loop calls a `Guard` hook for each thing that happens in a turn and acts on
the decision it gets back. A decision carries everything the loop needs (the
note, the stop's report instruction, the message that resumes a stopped turn),
so the loop keeps them in its own per-turn state and never reads the guard back.

This module is cheap to import: with the guard off the loop runs on `NullGuard`,
and none of the guard's detectors, summary or judge modules are loaded.
"""

from __future__ import annotations

from typing import Protocol

from caretz.guard.model import Mode, ToolObservation, TurnContext
from caretz.lazy_dataclass import lazy_dataclass
from caretz.messages import Message, ToolCall, Usage


@lazy_dataclass(frozen=True)
class Continue:
    pass


@lazy_dataclass(frozen=True)
class Redirect:
    note: str  # sent as a separate trailing message on each remaining request of the turn


@lazy_dataclass(frozen=True)
class Warn:
    message: str  # sent once, as a trailing message on the next request


@lazy_dataclass(frozen=True)
class Block:
    reason: str  # the tool call does not run; the model gets this as a failed result


@lazy_dataclass(frozen=True)
class AutoResume:
    """After a loop stop: the automated turn that resumes the work (autoResume)."""

    message: str
    count: int  # this resume's number in a row, from 1
    max_resumes: int


@lazy_dataclass(frozen=True)
class Stop:
    """The turn ends.

    Mid-turn, one last request goes without tools and with `report_instruction`
    as its trailing message; at the end of a turn (a cross-turn check) the
    answer is already there and `report_instruction` is empty.
    """

    notice: str  # the [loop-guard] notice the user sees
    report_instruction: str = ""
    resume: AutoResume | None = None  # set when autoResume may carry on by itself


@lazy_dataclass(frozen=True)
class Cut:
    """Close the response stream now (a looping stream); what streamed so far is kept."""

    reason: str
    then: Redirect | Stop  # what the rest of the turn does once the stream is closed


Decision = Continue | Redirect | Warn | Block | Stop | Cut
CONTINUE = Continue()


class Guard(Protocol):
    """The hooks the turn loop calls, in the order a turn calls them."""

    @property
    def mode(self) -> Mode: ...

    def begin_turn(self, ctx: TurnContext) -> None: ...

    def on_thinking(self, text: str) -> Continue | Warn | Cut:
        """A delta of streamed reasoning."""
        ...

    def on_text(self, text: str) -> Continue | Warn | Cut:
        """A delta of the streamed answer."""
        ...

    def after_response(self, message: Message, usage: Usage) -> Decision:
        """One model response is complete."""
        ...

    def before_tool(self, call: ToolCall) -> Continue | Block:
        """A call is about to run; Block refuses it."""
        ...

    def after_tool(self, obs: ToolObservation) -> Decision: ...

    def end_turn(self, final_text: str) -> Continue | Stop:
        """The turn answered; Stop means: do not continue it automatically."""
        ...

    def for_subagent(self) -> Guard:
        """The guard a subagent's turns run under."""
        ...


class NullGuard:
    """The guard when the mode is off: every hook answers Continue."""

    @property
    def mode(self) -> Mode:
        return "off"

    def begin_turn(self, ctx: TurnContext) -> None:
        pass

    def on_thinking(self, text: str) -> Continue:
        return CONTINUE

    def on_text(self, text: str) -> Continue:
        return CONTINUE

    def after_response(self, message: Message, usage: Usage) -> Continue:
        return CONTINUE

    def before_tool(self, call: ToolCall) -> Continue:
        return CONTINUE

    def after_tool(self, obs: ToolObservation) -> Continue:
        return CONTINUE

    def end_turn(self, final_text: str) -> Continue:
        return CONTINUE

    def for_subagent(self) -> NullGuard:
        return self
