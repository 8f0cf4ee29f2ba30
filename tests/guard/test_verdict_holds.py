"""A stop needs a "stuck" verdict; a "not stuck" verdict holds the pattern it was about."""

from __future__ import annotations

from caretz.guard.config import LoopGuardConfig
from caretz.guard.guard import LoopGuard
from caretz.guard.model import JudgeResult, ToolObservation, TurnContext
from caretz.guard.seam import Continue, Redirect, Stop
from caretz.guard.summary import build_summary
from caretz.messages import ToolCall
from tests.guard.test_guard import STUCK, Clock, Events
from tests.scripted import ScriptedJudge

TASK = "deploy the service and wait until it is up"
TIMEOUT = JudgeResult.no_verdict("test/judge", 15.0, "timeout after 15s")


def guard_with(judge: ScriptedJudge) -> tuple[LoopGuard, Events]:
    events = Events()
    guard = LoopGuard(LoopGuardConfig(mode="active"), judge, events.emit, clock=Clock())
    guard.begin_turn(TurnContext(task=TASK, model_ref="test/model"))
    return guard, events


def status(index: int, output: str = "status: pending\n", command: str = "./status.sh"):
    return ToolObservation(
        index=index,
        tool="bash",
        args={"command": command},
        output=output,
        failed=False,
        exit_code=0,
    )


def play(guard: LoopGuard, observations: list[ToolObservation]) -> list[object]:
    decisions = []
    for obs in observations:
        guard.before_tool(ToolCall(id=f"c{obs.index}", name=obs.tool, arguments=obs.args))
        decisions.append(guard.after_tool(obs))
        if guard.stopped:
            break
    return decisions


def poll(calls: int = 30) -> list[ToolObservation]:
    return [status(i, "status: done\n" if i == calls - 1 else "status: pending\n")
            for i in range(calls)]  # fmt: skip


def asked_at(events: Events) -> list[int]:
    return [e["step"] + 1 for e in events.of("LoopGuard.Judging")]


def test_a_long_poll_judged_not_stuck_costs_three_judge_calls_and_is_never_stopped():
    judge = ScriptedJudge()
    guard, events = guard_with(judge)
    assert play(guard, poll(30)) == [Continue()] * 30
    # Asked at the 3rd identical call, then at the stop level (8), then when it doubled.
    assert asked_at(events) == [3, 8, 16]
    assert not events.of("LoopGuard.Redirected") and not events.of("LoopGuard.Stopped")
    stop_level = [e for e in events.of("LoopGuard.Fired") if e["severity"] == "stop"]
    assert [e["action"] for e in stop_level] == ["judge", "judge"]


def test_the_same_poll_with_a_stuck_judge_is_redirected_then_stopped():
    guard, events = guard_with(ScriptedJudge(STUCK, STUCK))
    decisions = play(guard, poll(30))
    assert isinstance(decisions[2], Redirect) and isinstance(decisions[5], Stop)
    assert len(decisions) == 6
    assert [e["action"] for e in events.of("LoopGuard.Judged")] == ["redirect", "stop"]


def test_a_new_result_ends_the_hold():
    judge = ScriptedJudge()
    guard, events = guard_with(judge)
    outputs = ["status: pending\n"] * 5 + ["status: building\n"] * 3
    play(guard, [status(i, out) for i, out in enumerate(outputs)])
    assert asked_at(events) == [3, 8]  # the 3rd "building" asks again at once


def test_without_an_answering_judge_the_stop_level_acts_alone_and_says_so():
    guard, events = guard_with(ScriptedJudge(*[TIMEOUT] * 10))
    decisions = play(guard, poll(30))
    redirect, stop = decisions[7], decisions[-1]
    assert isinstance(redirect, Redirect) and isinstance(stop, Stop)
    assert len(decisions) == 16
    assert "No reviewer model could answer (timeout after 15s)" in redirect.note
    assert "No judge could answer (timeout after 15s), so the loop check acted on its own" in (
        stop.notice
    )
    assert events.of("LoopGuard.Stopped")[0]["no_judge"] == "timeout after 15s"
    # Two timeouts in a row: the judge counts as unreachable, so the stop levels (8, 16)
    # act alone; the judge-level checks still ask, in case it comes back.
    assert asked_at(events) == [3, 6, 11, 14]


def test_one_timeout_then_answers_keeps_the_judge_in_charge():
    guard, events = guard_with(ScriptedJudge(TIMEOUT))
    assert play(guard, poll(30)) == [Continue()] * 30
    assert not events.of("LoopGuard.Redirected")


def test_a_cycle_judged_not_stuck_is_asked_about_after_twice_the_rounds():
    judge = ScriptedJudge()
    guard, events = guard_with(judge)
    observations = []
    for n in range(30):
        observations.append(status(2 * n, "", command="sleep 10"))
        observations.append(status(2 * n + 1))
    assert play(guard, observations) == [Continue()] * 60
    asked = [(e["step"] + 1, e["trigger"]) for e in events.of("LoopGuard.Judging")]
    # The cycle asks after 3, 6, 12 and 24 rounds; the stretch without anything new
    # asks after 8 calls, then (held) after 16 more.
    assert [step for step, trigger in asked if trigger == "alternation"] == [6, 12, 24, 48]
    assert len(asked) <= 6


def test_the_summary_tells_waiting_from_retrying():
    guard, _ = guard_with(ScriptedJudge())
    play(guard, poll(6))
    counter = [
        ToolObservation(
            index=6 + i,
            tool="bash",
            args={"command": "./progress.sh"},
            output=f"{10 * i}% done\n",
            failed=False,
        )
        for i in range(3)
    ]
    play(guard, counter)
    summary = build_summary(guard.record)
    assert "6× Bash ./status.sh: its output changed between calls (2 different outputs)" in (
        summary
    )
    assert "3× Bash ./progress.sh: its output changed between calls (3 different outputs)" in (
        summary
    )
    guard.begin_turn(TurnContext(task=TASK, model_ref="test/model"))
    play(guard, poll(5)[:4])
    summary = build_summary(guard.record)
    assert "4× Bash ./status.sh: the same call returned the same successful output 4 times" in (
        summary
    )


def test_the_same_answer_stops_on_its_own_only_when_no_judge_answers():
    from tests.guard.test_guard import Scripted

    events = Events()
    judge = ScriptedJudge(TIMEOUT, TIMEOUT)
    guard = LoopGuard(
        LoopGuardConfig(mode="active"),
        judge,
        events.emit,
        clock=Clock(),
        detectors=[Scripted("same-answer", "stop", hook="end_turn", at=(0, 1, 2))],
    )
    decisions = []
    for _ in range(3):
        guard.begin_turn(TurnContext(task=TASK, model_ref="test/model", from_user=False))
        decisions.append(guard.end_turn("I could not finish."))
    # One timeout: the judge may still answer. The second makes it unreachable, so
    # the stop acts alone; the third turn's stop is not even asked about.
    assert decisions[0] == Continue()
    assert isinstance(decisions[1], Stop) and isinstance(decisions[2], Stop)
    assert "No judge could answer (timeout after 15s)" in decisions[2].notice
    assert len(judge.summaries) == 2
    assert [e["no_judge"] for e in events.of("LoopGuard.Stopped")] == ["timeout after 15s"] * 2
