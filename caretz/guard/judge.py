"""The judge: a model asked whether a turn is stuck, given the guard's summary.

A timeout, an error or an unreadable reply counts as "not stuck": the turn then
carries on as if the guard were off.

The guard reaches a model only through `Complete`, a plain "complete this
request" callable that the wiring builds over a provider, so nothing here
knows about HTTP or a provider's stream.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from caretz.guard.model import JudgeResult, Verdict
from caretz.inbound import BadInput, load_json, load_json_at
from caretz.messages import Message, ModelRequest, ModelResponse, Reasoning
from caretz.text import one_line

# Completes one request; gives up early (raising) once the event is set.
Complete = Callable[[ModelRequest, threading.Event], ModelResponse]

JUDGE_SYSTEM = """\
You review one turn of an AI coding agent and decide whether the turn is stuck. \
caretz, the program running the agent, asks you when a cheap check fires: the same \
failure came back several times, many recent calls failed, or a routine check after a \
number of calls. You see a short summary of the turn, not the whole transcript.

Judge the turn against the user's request for this turn and weigh that request \
heavily: a request to change many files implies a lot of similar calls.

The turn is stuck when it repeats without net progress, or when it has drifted off \
the task. For example:
- the same failing command or test is run again and again with nothing relevant \
changed in between, or with changes that cannot affect the failure;
- the same edit is made, undone and made again, or the calls cycle through the same \
few actions with the same results;
- the agent keeps restating the same plan without acting on it, or its messages say \
one thing while its calls do another;
- the calls no longer serve the user's request.

These are progress, not a loop:
- working through different errors, one after another, even when the same test \
fails each time: a new error is a step forward;
- re-running a build or the tests after real edits to the code;
- batch work over many files, or incremental edits to different parts of one file;
- reading or searching different paths, or paging through output that changes;
- retrying with changed arguments that get new results;
- waiting for something the request or the agent's messages name (a build, a job, \
a deploy, a server starting): the same call returning the same successful output \
while it polls is waiting, not looping, as long as the wait serves the request;
- a long turn doing distinct work that is relevant to the request.

Compare the arguments of the calls (paths, line ranges, old and new text, commands, \
queries) and their outcomes, not only the tool names. A count of failures alone is \
not evidence of a loop. When in doubt, answer not stuck.

Answer with one JSON object and nothing else:
{"stuck": true or false, "confidence": a number from 0 to 1, \
"reason": "...", "try_instead": "..."}
- reason: one sentence naming the concrete cause (the file, command or error), \
written so that the agent can act on it.
- try_instead: when stuck, one concrete next step that differs from what keeps \
failing; an empty string when not stuck.
"""

VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "stuck": {"type": "boolean"},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "reason": {"type": "string"},
        "try_instead": {"type": "string"},
    },
    "required": ["stuck", "confidence", "reason", "try_instead"],
    "additionalProperties": False,
}

# The answer is a short JSON object; reasoning needs room to think before it.
_ANSWER_TOKENS = 1024
_REASONING_TOKENS: dict[str, int] = {"off": 0, "low": 1024, "medium": 4096, "high": 16384}
_REPLY_PREVIEW_CHARS = 120
_TRUE = {"true", "yes", "1"}
_FALSE = {"false", "no", "0"}


def parse_verdict(text: str) -> Verdict:
    """A verdict from a model's reply: JSON alone, in a code fence or inside prose.

    Raises ValueError when there is no usable verdict.
    """
    for candidate in json_objects(text):
        if "stuck" in candidate:
            return _verdict_from(candidate)
    raise ValueError("no JSON object with a 'stuck' field")


def json_objects(text: str) -> list[dict[str, Any]]:
    """Every JSON object found in `text`, whole text first, then fenced, then embedded."""
    found: list[dict[str, Any]] = []
    stripped = text.strip()
    fenced = re.findall(r"```(?:json|JSON)?\s*(.*?)```", text, re.DOTALL)
    for chunk in [stripped, *fenced]:
        try:
            value = load_json(chunk, "the reply")
        except BadInput:
            continue
        if isinstance(value, dict):
            found.append(value)
    for match in re.finditer(r"\{", text):
        try:
            value, _ = load_json_at(text, match.start(), "the reply")
        except BadInput:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def _verdict_from(data: dict[str, Any]) -> Verdict:
    return Verdict(
        stuck=as_bool(data["stuck"], "stuck"),
        confidence=_as_confidence(data.get("confidence")),
        reason=as_text(data.get("reason")),
        try_instead=as_text(data.get("try_instead", data.get("tryInstead"))),
    )


def as_bool(value: Any, name: str) -> bool:
    """A yes/no field read leniently: true, "yes", 1, or the field's own name ("stuck");
    false, "no", 0, or "not stuck"."""
    if isinstance(value, bool):
        return value
    word = value.strip().lower() if isinstance(value, str) else None
    if word is not None and word in _TRUE | {name}:
        return True
    if word is not None and word in _FALSE | {f"not {name}"}:
        return False
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    raise ValueError(f"'{name}' is {value!r}, not true or false")


def _as_confidence(value: Any) -> float:
    if value is None:
        return 0.5
    try:
        number = float(str(value).strip().rstrip("%")) if isinstance(value, str) else float(value)
    except ValueError as error:
        raise ValueError(f"'confidence' is {value!r}, not a number") from error
    if number != number:  # NaN
        raise ValueError("'confidence' is not a number")
    return min(1.0, max(0.0, number))


def as_text(value: Any) -> str:
    if value is None:
        return ""
    return value.strip() if isinstance(value, str) else json.dumps(value)


def _seconds(value: float) -> str:
    return f"{value:g}s"


@dataclass
class _Outcome:
    response: ModelResponse | None = None
    error: Exception | None = None


@dataclass(frozen=True)
class Reply:
    """What a model asked once said: its response, or why there is none."""

    response: ModelResponse | None
    error: str | None  # "timeout after 15s", "error: …"
    latency_s: float


class ModelAsker:
    """A model asked about a summary through `complete`: a system prompt, a JSON schema
    for the answer, at most `timeout_s` of waiting. The judge and the goal's evaluator
    are two of these; each reads the reply its own way."""

    system = JUDGE_SYSTEM
    schema: dict[str, Any] | None = VERDICT_SCHEMA

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
            system=self.system,
            messages=[Message(role="user", content=summary)],
            reasoning=self.reasoning,
            max_tokens=_ANSWER_TOKENS + _REASONING_TOKENS.get(self.reasoning, 0),
            response_schema=self.schema,
        )

    def ask(self, summary: str, timeout_s: float) -> Reply:
        started = self._clock()
        try:
            response = complete_within(self.complete, self.request(summary), timeout_s)
        except Exception as error:  # a timeout or an error: no answer, said why
            return Reply(None, describe_failure(error), self._clock() - started)
        return Reply(response, None, self._clock() - started)


def unreadable(text: str) -> str:
    """How a reply without a usable answer is shown: `unreadable reply: <its start>`."""
    return f"unreadable reply: {one_line(text)[:_REPLY_PREVIEW_CHARS] or '(empty)'}"


class ModelJudge(ModelAsker):
    """The judge: a timeout, an error or an unreadable reply counts as "not stuck"."""

    def __call__(self, summary: str, timeout_s: float) -> JudgeResult:
        reply = self.ask(summary, timeout_s)
        if reply.response is None:
            return JudgeResult.no_verdict(self.model_ref, reply.latency_s, str(reply.error))
        text, usage = reply.response.message.content, reply.response.usage
        try:
            verdict = parse_verdict(text)
        except ValueError:
            return JudgeResult.no_verdict(self.model_ref, reply.latency_s, unreadable(text), usage)
        return JudgeResult(
            verdict=verdict, model=self.model_ref, latency_s=reply.latency_s, usage=usage
        )


class CompletionTimeout(Exception):
    """No answer within the time allowed; the request is closed at its next event."""


def complete_within(complete: Complete, request: ModelRequest, timeout_s: float) -> ModelResponse:
    """`complete(request)`, waiting at most `timeout_s` for it in a worker thread.

    Raises CompletionTimeout when time runs out (the worker then closes the stream
    at its next event, so an abandoned call stops costing tokens), or the error
    `complete` raised.
    """
    outcome = _Outcome()
    cancelled = threading.Event()

    def ask() -> None:
        try:
            outcome.response = complete(request, cancelled)
        except Exception as error:  # reported to the waiting thread, never raised here
            outcome.error = error

    worker = threading.Thread(target=ask, name="caretz-judge", daemon=True)
    worker.start()
    try:
        worker.join(timeout_s)
    except BaseException:  # Ctrl-C while waiting: the abandoned call stops streaming too
        cancelled.set()
        raise
    if worker.is_alive():
        cancelled.set()
        raise CompletionTimeout(f"timeout after {_seconds(timeout_s)}")
    if outcome.error is not None:
        raise outcome.error
    assert outcome.response is not None
    return outcome.response


def describe_failure(error: Exception) -> str:
    """How a call that gave no answer is shown: `timeout after 15s`, `error: …`."""
    if isinstance(error, CompletionTimeout):
        return str(error)
    text = str(error).strip()
    return f"error: {text or type(error).__name__}"


class NoJudge:
    """For offline replay: never calls a model; every check is "not stuck".

    It stands in for a judge that answers "not stuck": its answers hold what
    they were about, as a real judge's would, and it never counts as unreachable.
    """

    model = "none"
    stands_in = True

    def __call__(self, summary: str, timeout_s: float) -> JudgeResult:
        return JudgeResult.no_verdict(self.model, 0.0, "no judge")
