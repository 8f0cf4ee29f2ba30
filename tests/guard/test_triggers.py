"""The three documented triggers: repeat, failure-rate and check-every."""

from __future__ import annotations

from caretz.guard.config import LoopGuardConfig
from caretz.guard.model import Firing, ToolObservation, TurnContext, Verdict
from caretz.guard.triggers import (
    CheckEveryTrigger,
    FailureRateTrigger,
    RepeatTrigger,
    build_triggers,
)

CTX = TurnContext(task="make the integration tests pass", model_ref="test/model")
NOT_STUCK = Verdict(stuck=False, confidence=0.2)


def go_failure(index: int) -> ToolObservation:
    """The same Go build failure, with the line, column, path and timing changing each run."""
    output = (
        f"/tmp/go-build{9000 + index}/b001/db_test.go:{10 + index}:{index % 7 + 1}: "
        "undefined: testDB\n"
        f"FAIL\texample.com/app/db [build failed]\nok  \texample.com/app/api\t0.0{index}s\n"
    )
    return ToolObservation(
        index=index,
        tool="bash",
        args={"command": "go test ./..."},
        output=output,
        failed=True,
        exit_code=1,
    )


def failure(index: int, error: str) -> ToolObservation:
    return ToolObservation(
        index=index, tool="bash", args={"command": "pytest"}, output=error, failed=True, exit_code=1
    )


def success(index: int) -> ToolObservation:
    return ToolObservation(
        index=index,
        tool="bash",
        args={"command": "ls"},
        output="a.py\nb.py\n",
        failed=False,
        exit_code=0,
    )


def unknown(index: int) -> ToolObservation:
    return ToolObservation(
        index=index, tool="read", args={"path": "a.py"}, output="1: import os\n", failed=None
    )


def feed(detector, observations) -> list[Firing]:
    detector.begin_turn(CTX)
    firings = [detector.after_tool(obs) for obs in observations]
    return [firing for firing in firings if firing is not None]


# ---------------------------------------------------------------- repeat


def test_repeat_fires_on_the_third_go_failure_with_the_documented_headline():
    trigger = RepeatTrigger(3)
    trigger.begin_turn(CTX)
    assert trigger.after_tool(go_failure(0)) is None
    assert trigger.after_tool(success(1)) is None
    assert trigger.after_tool(go_failure(2)) is None
    firing = trigger.after_tool(go_failure(3))
    assert firing is not None
    assert firing.headline == "repeat: 3× Bash: <path>/db_test.go:N: undefined: testDB"
    assert firing.fingerprint == "Bash: <path>/db_test.go:N: undefined: testDB"
    assert firing.severity == "judge"
    assert firing.step == 3


def test_repeat_never_fires_on_different_errors():
    errors = [f"ValueError: bad value {name}" for name in ("a", "b", "c", "d", "e", "f")]
    errors += ["KeyError: 'x'", "TypeError: f() missing 1 required positional argument"]
    assert feed(RepeatTrigger(3), [failure(i, e) for i, e in enumerate(errors)]) == []


def test_repeat_honours_its_threshold_and_ignores_unknown_outcomes():
    observations = [go_failure(0), unknown(1), go_failure(2), unknown(3), unknown(4)]
    assert feed(RepeatTrigger(3), observations) == []
    (firing,) = feed(RepeatTrigger(2), observations)
    assert firing.headline.startswith("repeat: 2× ")


def test_after_not_stuck_the_failure_must_repeat_another_threshold_times():
    trigger = RepeatTrigger(3)
    firings = feed(trigger, [go_failure(i) for i in range(3)])
    assert len(firings) == 1
    trigger.after_verdict(firings[0], NOT_STUCK)
    assert trigger.after_tool(go_failure(3)) is None
    assert trigger.after_tool(go_failure(4)) is None
    again = trigger.after_tool(go_failure(5))
    assert again is not None and again.step == 5


def test_a_periodic_check_leaves_the_count_of_a_repeated_failure_alone():
    trigger = RepeatTrigger(3)
    feed(trigger, [failure(0, "KeyError: 'x'"), failure(1, "KeyError: 'x'")])
    trigger.after_verdict(
        Firing(detector="check-every", fingerprint="20 calls", headline="check-every: 20 calls"),
        NOT_STUCK,
    )
    trigger.after_verdict(
        Firing(detector="failure-rate", fingerprint="8 of 12", headline="failure-rate: 8 of 12"),
        NOT_STUCK,
    )
    third = trigger.after_tool(failure(2, "KeyError: 'x'"))
    assert third is not None and third.headline == "repeat: 3× Bash: KeyError: 'x'"
    assert third.failure == "Bash: KeyError: 'x'"


def test_a_verdict_on_one_failure_restarts_only_that_failures_count():
    trigger = RepeatTrigger(3)
    key_error, type_error = "KeyError: 'x'", "TypeError: bad operand"
    feed(trigger, [failure(0, key_error), failure(1, key_error)])
    trigger.after_tool(failure(2, type_error))
    trigger.after_tool(failure(3, type_error))
    fired = trigger.after_tool(failure(4, type_error))
    assert fired is not None and fired.failure == "Bash: TypeError: bad operand"
    trigger.after_verdict(fired, NOT_STUCK)
    # The other failure keeps its two occurrences: its third asks at once.
    again = trigger.after_tool(failure(5, key_error))
    assert again is not None and again.count == 3
    # A verdict naming a failure from another check (repeated-error) restarts it too.
    trigger.after_tool(failure(6, type_error))
    trigger.after_tool(failure(7, type_error))
    named = Firing(
        detector="repeated-error",
        fingerprint="x",
        headline="x",
        failure="Bash: TypeError: bad operand",
    )
    trigger.after_verdict(named, NOT_STUCK)
    assert trigger.after_tool(failure(8, type_error)) is None


# ---------------------------------------------------------------- failure-rate


def test_failure_rate_fires_when_8_of_the_last_12_calls_failed():
    trigger = FailureRateTrigger()
    observations = []
    for i in range(12):
        observations.append(failure(i, f"Error number {i}") if i % 3 != 0 else success(i))
    # 4 successes at 0, 3, 6, 9 → the 8th failure is call 11.
    (firing,) = feed(trigger, observations)
    assert firing.headline == "failure-rate: 8 of the last 12 calls failed"
    assert firing.step == 11


def test_failure_rate_stays_quiet_at_7_of_12_and_with_unknown_outcomes():
    observations = [
        failure(i, f"Error {i}") if i % 12 < 7 else (unknown(i) if i % 2 else success(i))
        for i in range(36)
    ]
    assert feed(FailureRateTrigger(), observations) == []


def test_failure_rate_counts_afresh_after_any_verdict():
    # The judge's summary lists the last 12 calls: whatever asked, it saw this window.
    trigger = FailureRateTrigger()
    feed(trigger, [failure(i, f"Error {i}") for i in range(7)])
    trigger.after_verdict(
        Firing(detector="repeat", fingerprint="x", headline="repeat: 3× x", failure="x"), NOT_STUCK
    )
    assert [trigger.after_tool(failure(i, f"Error {i}")) for i in range(7, 14)] == [None] * 7
    assert trigger.after_tool(failure(14, "Error 14")) is not None


def test_failure_rate_does_not_fire_on_every_call_after_a_not_stuck_verdict():
    trigger = FailureRateTrigger()
    firings = feed(trigger, [failure(i, f"Error {i}") for i in range(8)])
    assert len(firings) == 1
    trigger.after_verdict(firings[0], NOT_STUCK)
    later = [trigger.after_tool(failure(i, f"Error {i}")) for i in range(8, 15)]
    assert later == [None] * 7
    assert trigger.after_tool(failure(15, "Error 15")) is not None  # 8 new failures


# ---------------------------------------------------------------- check-every


def test_check_every_fires_every_20_calls_failed_or_not():
    trigger = CheckEveryTrigger(20)
    observations = [success(i) if i % 2 else failure(i, "Error") for i in range(45)]
    firings = feed(trigger, observations)
    assert [f.step for f in firings] == [19, 39]
    assert firings[0].headline == "check-every: 20 calls since the last check"


def test_check_every_0_is_off():
    assert feed(CheckEveryTrigger(0), [success(i) for i in range(100)]) == []
    names = [t.name for t in build_triggers(LoopGuardConfig(check_every=0))]
    assert names == ["repeat", "failure-rate"]


def test_any_judge_call_counts_as_a_check():
    trigger = CheckEveryTrigger(20)
    feed(trigger, [success(i) for i in range(15)])
    trigger.after_verdict(
        Firing(detector="repeat", fingerprint="x", headline="repeat: 3× x"), NOT_STUCK
    )
    assert [trigger.after_tool(success(i)) for i in range(15, 34)] == [None] * 19
    assert trigger.after_tool(success(34)) is not None


def test_build_triggers_uses_the_configured_thresholds():
    repeat, rate, every = build_triggers(LoopGuardConfig(repeat_threshold=5, check_every=7))
    assert (repeat.threshold, rate.failed, rate.window, every.every) == (5, 8, 12, 7)


def test_a_new_turn_starts_every_count_afresh():
    trigger = RepeatTrigger(3)
    feed(trigger, [go_failure(0), go_failure(1)])
    assert feed(trigger, [go_failure(2), go_failure(3)]) == []
