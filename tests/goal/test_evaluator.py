"""The goal evaluator: its reply read leniently, and no verdict counting as "not met"."""

from __future__ import annotations

import threading

import pytest

from caretz.goal.evaluator import (
    EVALUATOR_SYSTEM,
    GoalVerdict,
    ModelEvaluator,
    parse_goal_verdict,
)
from caretz.messages import Message, ModelRequest, ModelResponse, Usage


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        (
            '{"met": true, "impossible": false, "reason": "12 passed", "next_step": ""}',
            GoalVerdict(True, False, "12 passed", ""),
        ),
        (
            'Looking at it:\n```json\n{"met": "no", "reason": "2 fail", "nextStep": "fix"}\n```',
            GoalVerdict(False, False, "2 fail", "fix"),
        ),
        (
            'Verdict {"met": "not met", "impossible": "yes", "reason": "needs a key"} end',
            GoalVerdict(False, True, "needs a key", ""),
        ),
    ],
)
def test_replies_are_read_leniently(reply: str, verdict: GoalVerdict):
    assert parse_goal_verdict(reply) == verdict


@pytest.mark.parametrize("reply", ["The goal is met.", '{"stuck": false}', '{"met": "maybe"}'])
def test_a_reply_without_a_usable_verdict_is_refused(reply: str):
    with pytest.raises(ValueError):
        parse_goal_verdict(reply)


def reply_with(text: str):
    def complete(request: ModelRequest, cancelled: threading.Event) -> ModelResponse:
        complete.requests.append(request)  # type: ignore[attr-defined]
        return ModelResponse(
            Message(role="assistant", content=text),
            Usage(input_tokens=500, output_tokens=30),
            "end_turn",
            "m",
        )

    complete.requests = []  # type: ignore[attr-defined]
    return complete


def test_a_model_evaluator_asks_with_its_prompt_and_schema():
    complete = reply_with('{"met": false, "impossible": false, "reason": "r", "next_step": "n"}')
    evaluator = ModelEvaluator(complete, "eval-1", "test/eval-1", "low")

    evaluation = evaluator("## The goal\n...", 5.0)

    assert evaluation.verdict == GoalVerdict(False, False, "r", "n")
    assert evaluation.error is None and evaluation.usage == Usage(
        input_tokens=500, output_tokens=30
    )
    (request,) = complete.requests  # type: ignore[attr-defined]
    assert request.system == EVALUATOR_SYSTEM and request.model == "eval-1"
    assert request.response_schema is not None
    assert request.response_schema["required"] == ["met", "impossible", "reason", "next_step"]
    assert request.messages[0].content == "## The goal\n..."


def test_garbage_a_timeout_or_an_error_is_not_met_with_the_reason():
    garbage = ModelEvaluator(reply_with("I think you did great!"), "e", "test/e")("s", 5.0)

    def hang(request: ModelRequest, cancelled: threading.Event) -> ModelResponse:
        cancelled.wait(5)
        raise TimeoutError("closed")

    def fail(request: ModelRequest, cancelled: threading.Event) -> ModelResponse:
        raise ConnectionError("connection refused")

    slow = ModelEvaluator(hang, "e", "test/e")("s", 0.05)
    broken = ModelEvaluator(fail, "e", "test/e")("s", 5.0)

    assert garbage.verdict.met is False
    assert garbage.error == "unreadable reply: I think you did great!"
    assert (slow.verdict.met, slow.error) == (False, "timeout after 0.05s")
    assert (broken.verdict.met, broken.error) == (False, "error: connection refused")


# Its own SIGALRM stands for Ctrl-C, so the test's time limit runs on a thread instead.
@pytest.mark.timeout(method="thread")
def test_ctrl_c_while_waiting_for_the_model_closes_the_abandoned_call():
    import signal

    from caretz.guard.judge import complete_within

    closed = threading.Event()

    def complete(request: ModelRequest, cancelled: threading.Event) -> ModelResponse:
        if cancelled.wait(5):
            closed.set()
        raise ConnectionError("closed")

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.1)
        with pytest.raises(KeyboardInterrupt):
            complete_within(complete, ModelRequest(model="m", system="s", messages=[]), 5.0)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)

    assert closed.wait(2)
