"""In-process stand-ins for a model and a judge, for driving the turn loop without HTTP.

`ScriptedProvider` speaks the Provider seam: each `stream` call plays the next
scripted reply as TextDelta / ThinkingDelta / ToolCallStarted events and one
Completed, and records the ModelRequest it was given and whether the stream
was closed early. `ScriptedJudge` answers with queued verdicts and records the
summaries it was shown.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from caretz.goal.evaluator import NOT_MET, Evaluation, GoalVerdict
from caretz.guard.model import JudgeResult, Verdict
from caretz.messages import Message, ModelRequest, ModelResponse, ToolCall, Usage
from caretz.providers.base import (
    Completed,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallStarted,
)

NOT_STUCK = Verdict(False, 0.2, "each run fails differently")

_call_ids = itertools.count(1)


@dataclass
class Reply:
    """One scripted model response."""

    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    chunks: list[str] | None = None  # how the text streams (default: one delta)
    thinking: str = ""
    usage: Usage = field(default_factory=lambda: Usage(input_tokens=100, output_tokens=20))

    def events(self, model: str) -> Iterator[StreamEvent]:
        if self.thinking:
            yield ThinkingDelta(self.thinking)
        for chunk in self.chunks if self.chunks is not None else [self.text]:
            if chunk:
                yield TextDelta(chunk)
        for call in self.calls:
            yield ToolCallStarted(call.id, call.name)
        message = Message(role="assistant", content=self.text, tool_calls=list(self.calls))
        stop_reason = "tool_use" if self.calls else "end_turn"
        yield Completed(ModelResponse(message, self.usage, stop_reason, model))


def answer(text: str, **kw: Any) -> Reply:
    return Reply(text=text, **kw)


def call(name: str, **args: Any) -> ToolCall:
    return ToolCall(id=f"call_{next(_call_ids)}", name=name, arguments=args)


def calls(*tool_calls: ToolCall, text: str = "") -> Reply:
    return Reply(text=text, calls=list(tool_calls))


def bash(command: str) -> Reply:
    return calls(call("bash", command=command))


class ScriptedProvider:
    """A Provider that plays scripted replies in order and records every request."""

    name = "scripted"

    def __init__(self, *replies: Reply):
        self.replies = list(replies)
        self.requests: list[ModelRequest] = []
        self.closed_early = 0  # streams closed before their Completed was read

    def add(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        self.requests.append(request)
        if not self.replies:
            raise AssertionError(f"no scripted reply left for request {len(self.requests)}")
        return self._play(self.replies.pop(0), request.model)

    def _play(self, reply: Reply, model: str) -> Iterator[StreamEvent]:
        finished = False
        try:
            for event in reply.events(model):
                finished = isinstance(event, Completed)
                yield event
        finally:
            if not finished:
                self.closed_early += 1


class ScriptedJudge:
    """Answers with queued verdicts (or whole results); records what it was shown."""

    def __init__(self, *answers: Verdict | JudgeResult | Exception):
        self.answers = list(answers)
        self.summaries: list[str] = []
        self.timeouts: list[float] = []

    def __call__(self, summary: str, timeout_s: float) -> JudgeResult:
        self.summaries.append(summary)
        self.timeouts.append(timeout_s)
        answer = self.answers.pop(0) if self.answers else NOT_STUCK
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, JudgeResult):
            return answer
        return JudgeResult(
            verdict=answer,
            model="test/judge",
            latency_s=2.3,
            usage=Usage(input_tokens=1204, output_tokens=88),
        )


class ScriptedEvaluator:
    """A goal evaluator answering with queued verdicts (or whole evaluations, or an
    exception raised); records what it was shown."""

    model_ref = "test/evaluator"

    def __init__(self, *answers: GoalVerdict | Evaluation | BaseException):
        self.answers = list(answers)
        self.summaries: list[str] = []

    def __call__(self, summary: str, timeout_s: float) -> Evaluation:
        self.summaries.append(summary)
        answer = self.answers.pop(0) if self.answers else NOT_MET
        if isinstance(answer, BaseException):
            raise answer
        if isinstance(answer, Evaluation):
            return answer
        return Evaluation(
            verdict=answer,
            model=self.model_ref,
            latency_s=0.4,
            usage=Usage(input_tokens=900, output_tokens=40),
        )
