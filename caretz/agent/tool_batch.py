"""A reply's consecutive read-only calls, run at the same time (Turn.run_tools).

Each call is checked in the turn's thread, one after another, so a permission question
never overlaps another and the guard sees every call before it runs; then the tools run
together (tools/parallel.py); then each call's after-call hooks run, its result is
logged, added to the conversation and observed by the guard, in the reply's order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from caretz.agent.outcomes import RuntimeFailure
from caretz.messages import ToolCall
from caretz.tools.base import ToolResult
from caretz.tools.parallel import run_together
from caretz.tools.policy import EndTurn
from caretz.tools.registry import ReadyCall, ToolCrash

if TYPE_CHECKING:
    from caretz.agent.turn import Turn

Started = tuple[int, ToolCall, ReadyCall | ToolResult]  # index, call, ready or refused
NOT_RUN_AFTER_INTERRUPT = "Not run: the user interrupted the turn."


def run_parallel(turn: Turn, calls: list[ToolCall]) -> None:
    started: list[Started] = []
    try:
        for call in calls:
            if turn.stopping is not None:
                break
            turn.config.limits.check_before_tool_call(turn.conversation.totals)
            started.append(turn.start_tool(call, len(calls)))
    except BaseException as error:
        # The calls checked so far run and are answered (a limit, a hook ending the
        # turn), or, after Ctrl-C, are answered as not run.
        _finish(turn, started, run=not isinstance(error, KeyboardInterrupt))
        raise
    _finish(turn, started, run=True)


def _finish(turn: Turn, started: list[Started], *, run: bool) -> None:
    tools, clock = turn.parts.tools, turn.parts.clock
    ready = {n: item for n, (_, _, item) in enumerate(started) if isinstance(item, ReadyCall)}
    began = clock()
    outcomes: dict[int, ToolResult | BaseException] = {}
    try:
        if run:
            run_together(ready, tools.invoke, outcomes)
    except KeyboardInterrupt:
        for position, (index, call, item) in enumerate(started):
            outcome = item if isinstance(item, ToolResult) else outcomes.get(position)
            if isinstance(outcome, ToolResult):
                turn.emit_result(index, call, outcome)
                turn.record(index, call, outcome)
            else:
                turn.record_interrupted(index, call, KeyboardInterrupt(), clock() - began)
        raise
    for position, (index, call, item) in enumerate(started):
        if isinstance(item, ToolResult):
            result = item
        elif not run:
            result = ToolResult(ok=False, output=NOT_RUN_AFTER_INTERRUPT)
        else:
            result = _finished(turn, index, call, item, outcomes[position])
        turn.emit_result(index, call, result)
        turn.record(index, call, result)


def _finished(
    turn: Turn, index: int, call: ToolCall, ready: ReadyCall, outcome: ToolResult | BaseException
) -> ToolResult:
    if isinstance(outcome, ToolCrash):
        turn.emit_result(index, call, ToolResult(ok=False, output=str(outcome)))
        raise RuntimeFailure(str(outcome)) from outcome
    if isinstance(outcome, BaseException):
        raise outcome
    try:
        return turn.parts.tools.finish(ready, outcome)
    except EndTurn as end:
        turn.end_by_hook(index, call, end)
