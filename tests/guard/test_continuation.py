"""The guard across a goal's turns: one redirect for the whole goal, the same-answer
count kept across automated turns, and the agent's plan in the judge's summary."""

from __future__ import annotations

from caretz.guard.config import LoopGuardConfig
from caretz.guard.guard import LoopGuard
from caretz.guard.model import ToolObservation, TurnContext
from caretz.guard.seam import Continue, Redirect, Stop
from caretz.guard.summary import build_summary
from caretz.plan import PlanItem
from tests.guard.test_guard import STUCK, TASK, Clock, Events, go_failure, make_guard, run
from tests.scripted import ScriptedJudge

CONTINUATION = TurnContext(task="[goal] carry on", model_ref="test/model", from_user=False,
                           continuation=True)  # fmt: skip


def test_a_continuation_turn_keeps_the_redirect_so_the_next_stuck_verdict_stops():
    guard, events = make_guard(ScriptedJudge(STUCK, STUCK))
    assert isinstance(run(guard, [go_failure(i) for i in range(3)])[-1], Redirect)

    guard.begin_turn(CONTINUATION)
    decisions = run(guard, [go_failure(i) for i in range(3)])

    assert isinstance(decisions[-1], Stop)
    assert [e["action"] for e in events.of("LoopGuard.Judged")] == ["redirect", "stop"]


def test_any_other_turn_gets_its_own_redirect():
    guard, _ = make_guard(ScriptedJudge(STUCK, STUCK))
    run(guard, [go_failure(i) for i in range(3)])

    guard.begin_turn(TurnContext(task="[goal] carry on", model_ref="test/model", from_user=False))

    assert isinstance(run(guard, [go_failure(i) for i in range(3)])[-1], Redirect)


def test_the_same_answer_is_counted_across_automated_turns_and_reset_by_the_user():
    config = LoopGuardConfig(mode="active")
    judge = ScriptedJudge(STUCK)
    guard = LoopGuard(config, judge, Events().emit, clock=Clock())

    def answer_turn(ctx: TurnContext) -> object:
        guard.begin_turn(ctx)
        return guard.end_turn("The tests still fail; I cannot see why.")

    assert answer_turn(TurnContext(task=TASK, model_ref="test/model")) == Continue()
    assert answer_turn(CONTINUATION) == Continue()
    # A turn the user types starts the count again.
    assert answer_turn(TurnContext(task="try again", model_ref="test/model")) == Continue()
    assert answer_turn(CONTINUATION) == Continue()
    stop = answer_turn(CONTINUATION)

    assert isinstance(stop, Stop)
    assert "same answer 3 turns in a row" in stop.notice
    assert len(judge.summaries) == 1  # the stop needed the judge's "stuck"


def test_the_same_answer_with_a_not_stuck_judge_carries_on():
    judge = ScriptedJudge()  # "not stuck"
    guard = LoopGuard(LoopGuardConfig(mode="active"), judge, Events().emit, clock=Clock())
    decisions = []
    for ctx in [TurnContext(task=TASK, model_ref="test/model"), CONTINUATION, CONTINUATION]:
        guard.begin_turn(ctx)
        decisions.append(guard.end_turn("The tests still fail; I cannot see why."))
    assert decisions == [Continue()] * 3
    assert len(judge.summaries) == 1


def test_the_judge_sees_the_plan_the_turn_started_with_then_the_latest_one():
    plan = (PlanItem("reproduce the failure", "done"), PlanItem("fix the fixture", "in_progress"))
    guard, _ = make_guard(ScriptedJudge())
    guard.begin_turn(TurnContext(task=TASK, model_ref="test/model", plan=plan))
    assert guard.record is not None

    first = build_summary(guard.record)
    guard.after_tool(
        ToolObservation(index=0, tool="todo", args={"todos": [{"content": "ship it", "status": "pending"}]},
                        output="Plan updated", failed=False)
    )  # fmt: skip
    second = build_summary(guard.record)

    assert (
        "## The agent's plan (1 of 2 done)\n[x] reproduce the failure\n[>] fix the fixture" in first
    )
    assert "## The agent's plan (0 of 1 done)\n[ ] ship it" in second
    assert "fix the fixture" not in second
