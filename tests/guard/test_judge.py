"""The judge: verdict parsing, ModelJudge over real providers, timeouts and errors.

A ModelJudge reaches its model through a plain "complete this request" callable;
`runtime.model_judge` builds one over a provider, as sessions do.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import pytest

from caretz.guard.judge import JUDGE_SYSTEM, VERDICT_SCHEMA, ModelJudge, NoJudge, parse_verdict
from caretz.guard.model import Verdict
from caretz.messages import Message, ModelRequest, ModelResponse, Usage
from caretz.providers.base import Completed, StreamEvent, TextDelta
from caretz.providers.registry import BUILTIN_PROVIDERS, create_provider
from caretz.runtime.judge import model_judge
from tests.modelserver import ModelServer, error, text

STUCK_JSON = json.dumps(
    {
        "stuck": True,
        "confidence": 0.9,
        "reason": "testDB is declared in a file with a build tag the test run doesn't set.",
        "try_instead": "run go test with -tags integration.",
    }
)
SUMMARY = "## The user's request for this turn\nmake the integration tests pass"


class StepClock:
    """Advances by `step` seconds at each reading."""

    def __init__(self, step: float):
        self.step = step
        self.now = 0.0

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def anthropic_judge(server: ModelServer, reasoning: str = "off", clock=None) -> ModelJudge:
    provider = create_provider(
        BUILTIN_PROVIDERS["anthropic"], "sk-ant-test", base_url=server.url, max_retries=0
    )
    extra = {"clock": clock} if clock else {}
    return model_judge(provider, "claude-judge", "anthropic/claude-judge", reasoning, **extra)


# ---------------------------------------------------------------- parse_verdict


@pytest.mark.parametrize(
    "reply",
    [
        STUCK_JSON,
        f"```json\n{STUCK_JSON}\n```",
        f"Looking at the calls, the same build error repeats.\n{STUCK_JSON}\nThat's my verdict.",
        '{"stuck": "true", "confidence": "0.9", "reason": "r", "try_instead": "t"}',
    ],
)
def test_parse_verdict_reads_json_alone_fenced_in_prose_or_with_strings(reply: str):
    verdict = parse_verdict(reply)
    assert verdict.stuck is True
    assert verdict.confidence == pytest.approx(0.9)


def test_parse_verdict_clamps_confidence_and_fills_missing_text():
    assert parse_verdict('{"stuck": false, "confidence": 7}') == Verdict(False, 1.0, "", "")
    assert parse_verdict('{"stuck": "no", "confidence": -2}').confidence == 0.0
    assert parse_verdict('{"stuck": false}').confidence == 0.5


@pytest.mark.parametrize(
    "reply",
    ["", "I think the agent is fine.", '{"confidence": 0.9}', '{"stuck": "maybe"}', "[1, 2]"],
)
def test_parse_verdict_raises_when_there_is_no_usable_verdict(reply: str):
    with pytest.raises(ValueError):
        parse_verdict(reply)


def test_the_schema_asks_for_the_four_fields():
    assert VERDICT_SCHEMA["required"] == ["stuck", "confidence", "reason", "try_instead"]
    assert VERDICT_SCHEMA["properties"]["stuck"] == {"type": "boolean"}


def test_the_system_prompt_carries_the_lessons_about_progress():
    prompt = JUDGE_SYSTEM.lower()
    for lesson in (
        "user's request",
        "different errors",
        "after real edits",
        "batch work over many files",
        "compare the arguments",
        "drifted off",
        "without net progress",
        '"try_instead"',
    ):
        assert lesson in prompt


# ---------------------------------------------------------------- ModelJudge over a callable


def test_model_judge_reaches_its_model_only_through_complete():
    requests: list[ModelRequest] = []

    def complete(request: ModelRequest, cancelled: threading.Event) -> ModelResponse:
        requests.append(request)
        return ModelResponse(
            Message(role="assistant", content=STUCK_JSON),
            Usage(input_tokens=30, output_tokens=4),
            "end_turn",
            "m",
        )

    result = ModelJudge(complete, "judge-1", "test/judge-1", "low", clock=StepClock(0.5))(
        SUMMARY, 15
    )

    assert result.error is None and result.verdict.stuck is True
    assert (result.model, result.usage, result.latency_s) == (
        "test/judge-1",
        Usage(input_tokens=30, output_tokens=4),
        0.5,
    )
    (request,) = requests
    assert request.model == "judge-1" and request.system == JUDGE_SYSTEM
    assert request.messages == [Message(role="user", content=SUMMARY)]
    assert request.response_schema == VERDICT_SCHEMA
    assert request.reasoning == "low" and request.max_tokens == 1024 + 1024


# ---------------------------------------------------------------- ModelJudge over HTTP


def test_model_judge_asks_over_anthropic_and_reads_the_verdict(server: ModelServer):
    server.add(text(STUCK_JSON, usage=(1204, 88, 0)))
    result = anthropic_judge(server, clock=StepClock(2.3))(SUMMARY, 15)

    assert result.error is None
    assert result.verdict.stuck is True
    assert result.verdict.try_instead == "run go test with -tags integration."
    assert result.model == "anthropic/claude-judge"
    assert result.usage == Usage(input_tokens=1204, output_tokens=88)
    assert result.latency_s == pytest.approx(2.3)
    (request,) = server.requests
    assert request.model == "claude-judge"
    assert request.system.startswith(JUDGE_SYSTEM.strip()[:60])
    assert '"try_instead"' in request.system  # the schema goes along
    assert request.messages == [{"role": "user", "content": SUMMARY}]
    assert request.body["max_tokens"] == 1024
    assert "tools" not in request.body


def test_model_judge_over_openai_sends_the_schema_as_response_format(server: ModelServer):
    server.add(
        text('{"stuck": false, "confidence": 0.2, "reason": "new errors", "try_instead": ""}')
    )
    provider = create_provider(
        BUILTIN_PROVIDERS["openai"], "sk-test", base_url=server.openai_url, max_retries=0
    )
    result = model_judge(provider, "gpt-judge", "openai/gpt-judge", "high")(SUMMARY, 15)

    assert result.error is None
    assert result.verdict == Verdict(False, 0.2, "new errors", "")
    body = server.requests[0].body
    assert body["response_format"]["json_schema"]["schema"] == VERDICT_SCHEMA
    assert body["reasoning_effort"] == "high"


def test_an_unreadable_reply_counts_as_not_stuck(server: ModelServer):
    server.add(text("Hmm, it is hard to say whether the agent is stuck."))
    result = anthropic_judge(server)(SUMMARY, 15)
    assert result.verdict.stuck is False
    assert result.verdict.confidence == 0
    assert result.error == "unreadable reply: Hmm, it is hard to say whether the agent is stuck."


def test_a_provider_error_counts_as_not_stuck(server: ModelServer):
    server.add(error(400, "max_tokens is too large"))
    result = anthropic_judge(server)(SUMMARY, 15)
    assert result.verdict.stuck is False
    assert result.error is not None
    assert result.error.startswith("error: ")
    assert "max_tokens is too large" in result.error


# ---------------------------------------------------------------- timeouts


def test_a_slow_judge_times_out_as_not_stuck(server: ModelServer):
    server.add(text(STUCK_JSON, delay_s=3.0))
    result = anthropic_judge(server)(SUMMARY, 0.1)
    assert result.error == "timeout after 0.1s"
    assert result.verdict.stuck is False
    assert result.model == "anthropic/claude-judge"


class HangingProvider:
    """Streams nothing until released; records that the judge closed its stream."""

    name = "hanging"

    def __init__(self) -> None:
        self.release = threading.Event()
        self.closed = threading.Event()

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        try:
            self.release.wait(10)
            yield TextDelta("late")
            message = Message(role="assistant", content=STUCK_JSON)
            yield Completed(ModelResponse(message, Usage(), "end_turn", request.model))
        finally:
            self.closed.set()


def test_a_timeout_counts_as_not_stuck_and_the_late_stream_is_closed():
    provider = HangingProvider()
    judge = model_judge(provider, "slow", "test/slow", "off")
    try:
        result = judge(SUMMARY, 0.05)
    finally:
        provider.release.set()
    assert result.error == "timeout after 0.05s"
    assert result.verdict.stuck is False
    assert result.model == "test/slow"
    assert provider.closed.wait(5)


def test_a_judge_answering_in_time_has_no_error():
    provider = HangingProvider()
    provider.release.set()
    judge = model_judge(provider, "fast", "test/fast", "off")
    assert judge(SUMMARY, 15).error is None


class RaisingProvider:
    name = "raising"

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        raise ConnectionError("connection refused")


def test_an_exception_before_streaming_counts_as_not_stuck():
    result = model_judge(RaisingProvider(), "m", "test/m", "off")(SUMMARY, 15)
    assert result.error == "error: connection refused"
    assert result.verdict.stuck is False


def test_no_judge_never_calls_anything_and_is_never_stuck():
    result = NoJudge()(SUMMARY, 15)
    assert result.verdict.stuck is False
    assert (result.model, result.error, result.latency_s) == ("none", "no judge", 0.0)
