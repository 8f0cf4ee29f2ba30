"""The goal evaluator: a model asked, after each turn, whether the goal is met.

It sees the bounded summary `goal/summary.py` builds and answers in JSON:
`{"met", "impossible", "reason", "next_step"}`. Its reply is read as leniently
as the loop guard's judge reads its own (the same readers), and a timeout, an
error or an unreadable reply counts as "not met", with the reason shown. Like
the judge it reaches a model only through a plain `complete` callable.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from caretz.goal.state import NOT_MET, GoalVerdict
from caretz.guard.judge import (
    Complete,
    as_bool,
    as_text,
    complete_within,
    describe_failure,
    json_objects,
)
from caretz.messages import Message, ModelRequest, ModelResponse, Reasoning, Usage
from caretz.text import one_line

EVALUATOR_SYSTEM = """\
You check whether an AI coding agent has met a goal the user set. caretz, the program \
running the agent, asks you after each of the agent's turns; when the goal is not met, \
your reason and next step go back to the agent and it carries on.

You see a short summary of the latest turn: the goal, the agent's plan, its answer, its \
last tool calls with their output (test runs, builds, commands), the files it changed, \
and your earlier verdicts. You cannot run anything yourself.

Judge by evidence. The goal is met when the summary shows it: the test run that must \
pass passed, the file exists with the asked-for content, the command's output says so. \
The agent saying it is done is not enough on its own; a claim the tool output \
contradicts is not met.

Impossible means no further work by the agent can meet it: the goal contradicts \
itself, or needs something only the user can give (a credential, an account, a \
decision). A goal that is hard, slow, or not done yet is not impossible. When in \
doubt, answer not met.

Answer with one JSON object and nothing else:
{"met": true or false, "impossible": true or false, "reason": "...", "next_step": "..."}
- reason: one sentence: the evidence that the goal is met, or what still stands between \
the agent and the goal (for example: 2 tests still fail: test_login, test_logout).
- next_step: when neither met nor impossible, the one concrete next step; else "".
"""

VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "met": {"type": "boolean"},
        "impossible": {"type": "boolean"},
        "reason": {"type": "string"},
        "next_step": {"type": "string"},
    },
    "required": ["met", "impossible", "reason", "next_step"],
    "additionalProperties": False,
}

_ANSWER_TOKENS = 1024
_REASONING_TOKENS: dict[str, int] = {"off": 0, "low": 1024, "medium": 4096, "high": 16384}
_REPLY_PREVIEW_CHARS = 120


@dataclass(frozen=True)
class Evaluation:
    verdict: GoalVerdict
    model: str
    latency_s: float
    usage: Usage = field(default_factory=Usage)
    error: str | None = None  # timeout / error / unreadable reply: the verdict is "not met"


class Evaluator(Protocol):
    model_ref: str

    def __call__(self, summary: str, timeout_s: float) -> Evaluation: ...


def parse_goal_verdict(text: str) -> GoalVerdict:
    """A verdict from a reply: JSON alone, in a code fence or inside prose.

    Raises ValueError when there is none.
    """
    for candidate in json_objects(text):
        if "met" in candidate:
            return GoalVerdict(
                met=as_bool(candidate["met"], "met"),
                impossible=as_bool(candidate.get("impossible", False), "impossible"),
                reason=as_text(candidate.get("reason")),
                next_step=as_text(candidate.get("next_step", candidate.get("nextStep"))),
            )
    raise ValueError("no JSON object with a 'met' field")


class ModelEvaluator:
    """Asks a model through `complete`; waits at most `timeout_s` for its answer."""

    def __init__(
        self,
        complete: Complete,
        model_id: str,
        model_ref: str,
        reasoning: Reasoning = "off",
        clock: Callable[[], float] = time.monotonic,
    ):
        self.complete = complete
        self.model_id = model_id
        self.model_ref = model_ref
        self.reasoning = reasoning
        self._clock = clock

    def request(self, summary: str) -> ModelRequest:
        return ModelRequest(
            model=self.model_id,
            system=EVALUATOR_SYSTEM,
            messages=[Message("user", summary)],
            reasoning=self.reasoning,
            max_tokens=_ANSWER_TOKENS + _REASONING_TOKENS.get(self.reasoning, 0),
            response_schema=VERDICT_SCHEMA,
        )

    def __call__(self, summary: str, timeout_s: float) -> Evaluation:
        started = self._clock()
        try:
            response = complete_within(self.complete, self.request(summary), timeout_s)
        except Exception as error:  # a timeout or an error: "not met", shown
            return self._no_verdict(started, describe_failure(error))
        return self._read(response, started)

    def _read(self, response: ModelResponse, started: float) -> Evaluation:
        latency = self._clock() - started
        text = response.message.content
        try:
            verdict = parse_goal_verdict(text)
        except ValueError:
            preview = one_line(text)[:_REPLY_PREVIEW_CHARS] or "(empty)"
            return self._no_verdict(started, f"unreadable reply: {preview}", response.usage)
        return Evaluation(verdict, self.model_ref, latency, response.usage)

    def _no_verdict(self, started: float, error: str, usage: Usage | None = None) -> Evaluation:
        latency = self._clock() - started
        return Evaluation(NOT_MET, self.model_ref, latency, usage or Usage(), error)
