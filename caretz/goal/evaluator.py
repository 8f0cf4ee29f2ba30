"""The goal evaluator: a model asked, after each turn, whether the goal is met.

It sees the bounded summary `goal/summary.py` builds and answers in JSON:
`{"met", "impossible", "reason", "next_step"}`. Its reply is read as leniently
as the loop guard's judge reads its own (the same readers), and a timeout, an
error or an unreadable reply counts as "not met", with the reason shown. Like
the judge it reaches a model only through a plain `complete` callable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from caretz.goal.state import NOT_MET, GoalVerdict
from caretz.guard.judge import ModelAsker, as_bool, as_text, json_objects, unreadable
from caretz.messages import Usage

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


@dataclass(frozen=True, kw_only=True)
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


class ModelEvaluator(ModelAsker):
    """The evaluator: a timeout, an error or an unreadable reply counts as "not met"."""

    system = EVALUATOR_SYSTEM
    schema = VERDICT_SCHEMA

    def __call__(self, summary: str, timeout_s: float) -> Evaluation:
        reply = self.ask(summary, timeout_s)
        if reply.response is None:
            return Evaluation(
                verdict=NOT_MET, model=self.model_ref, latency_s=reply.latency_s, error=reply.error
            )
        text, usage = reply.response.message.content, reply.response.usage
        try:
            verdict = parse_goal_verdict(text)
        except ValueError:
            return Evaluation(
                verdict=NOT_MET,
                model=self.model_ref,
                latency_s=reply.latency_s,
                usage=usage,
                error=unreadable(text),
            )
        return Evaluation(
            verdict=verdict, model=self.model_ref, latency_s=reply.latency_s, usage=usage
        )
