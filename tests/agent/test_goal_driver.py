"""The goal driver in process: a scripted model, a scripted evaluator, real tools and guard.

The end-to-end tests (tests/e2e/test_goals.py) run the same through the real CLI;
these pin the driver's decisions and what it records.
"""

from __future__ import annotations

from pathlib import Path

from caretz.agent.goal_driver import GoalDriver
from caretz.agent.limits import UsageLimits
from caretz.goal.evaluator import Evaluation, GoalVerdict
from caretz.goal.state import Goal, restore_goal
from caretz.messages import Usage
from caretz.session.records.parse import parse_record
from tests.agent.test_turn import STUCK, make_agent
from tests.scripted import ScriptedEvaluator, ScriptedJudge, ScriptedProvider, answer, bash, call
from tests.scripted import calls as tool_calls

CONDITION = "tests/test_app.py passes"
NOT_MET = GoalVerdict(False, False, "2 tests still fail", "fix test_login's fixture")
MET = GoalVerdict(True, False, "the suite passed: 12 passed")


def goal(max_turns: int = 20) -> Goal:
    return Goal(condition=CONDITION, max_turns=max_turns, prompt=CONDITION)


def test_not_met_twice_then_met_runs_three_turns_with_marked_continuations(tmp_path: Path):
    provider = ScriptedProvider(answer("Tried."), answer("Closer."), answer("Done."))
    agent, events = make_agent(tmp_path, provider)
    evaluator = ScriptedEvaluator(NOT_MET, NOT_MET, MET)

    run = GoalDriver(agent, goal(), evaluator, 30.0).start(CONDITION)

    assert (run.exit_code, run.goal["status"], run.goal["turns"]) == (0, "met", 3)
    assert run.message == "goal met after 3 turns: the suite passed: 12 passed"
    continuation = provider.requests[1].messages[-1].content
    assert continuation.startswith("[goal] Automated message from caretz, not from the user.")
    assert "this is turn 2 of at most 20" in continuation
    assert f'Goal: "{CONDITION}"' in continuation
    assert "Evaluator: 2 tests still fail\nNext step: fix test_login's fixture" in continuation
    started = events.of("Turn.Started")
    assert [e["from_user"] for e in started] == [True, False, False]
    evaluated = events.of("Goal.Evaluated")
    assert [e["turn"] for e in evaluated] == [1, 2, 3]
    assert evaluated[0]["summary"] == evaluator.summaries[0]
    assert events.of("Goal.Ended")[0]["status"] == "met"


def test_the_evaluator_sees_the_goal_the_answer_the_output_and_the_plan(tmp_path: Path):
    plan = {"todos": [{"content": "run the tests", "status": "in_progress"}]}
    provider = ScriptedProvider(
        tool_calls(call("todo", **plan)),
        bash("printf 'FAILED test_login\\n1 failed, 11 passed\\n'; exit 1"),
        answer("One test still fails."),
    )
    agent, _ = make_agent(tmp_path, provider)
    evaluator = ScriptedEvaluator(GoalVerdict(False, True, "needs a password only you have"))

    run = GoalDriver(agent, goal(), evaluator, 30.0).start("make the suite pass")

    assert (run.exit_code, run.goal["status"]) == (5, "impossible")
    summary = evaluator.summaries[0]
    assert f'## The goal\n"""\n{CONDITION}\n"""' in summary
    assert "The request that started the work:" in summary and "make the suite pass" in summary
    assert "## The agent's plan (0 of 1 done)\n[>] run the tests" in summary
    assert '## The agent\'s answer at the end of the turn\n"""\nOne test still fails.' in summary
    assert "    | 1 failed, 11 passed" in summary


def test_no_verdict_counts_as_not_met_and_the_goal_carries_on(tmp_path: Path):
    provider = ScriptedProvider(answer("One."), answer("Two."))
    agent, events = make_agent(tmp_path, provider)
    timeout = Evaluation(
        verdict=GoalVerdict(False), model="test/evaluator", latency_s=1.0, error="timeout after 1s"
    )

    run = GoalDriver(agent, goal(), ScriptedEvaluator(timeout, MET), 1.0).start(CONDITION)

    assert run.exit_code == 0 and run.goal["turns"] == 2
    continuation = provider.requests[1].messages[-1].content
    assert "The evaluator gave no verdict (timeout after 1s); check the goal yourself." in (
        continuation
    )
    assert events.of("Goal.Evaluated")[0]["error"] == "timeout after 1s"


def test_max_turns_ends_the_goal_with_exit_4(tmp_path: Path):
    provider = ScriptedProvider(answer("a"), answer("b"))
    agent, events = make_agent(tmp_path, provider)

    run = GoalDriver(agent, goal(max_turns=2), ScriptedEvaluator(), 30.0).start(CONDITION)

    assert (run.exit_code, run.goal["status"], run.goal["turns"]) == (4, "max_turns", 2)
    assert run.message.startswith("goal not met after 2 turns (goal.maxTurns 2)")
    assert len(provider.requests) == 2


def test_a_budget_spent_by_the_agent_and_the_evaluator_ends_the_goal(tmp_path: Path):
    provider = ScriptedProvider(answer("a"), answer("b"))
    agent, _ = make_agent(tmp_path, provider, limits=UsageLimits(max_budget_usd=0.05))
    agent.parts = type(agent.parts)(**{**agent.parts.__dict__, "price": lambda ref, u: 0.03})

    run = GoalDriver(agent, goal(), ScriptedEvaluator(), 30.0).start(CONDITION)

    # Turn 1 costs 0.03, its evaluation 0.03: over 0.05 before a second turn starts.
    assert (run.exit_code, run.goal["status"]) == (4, "limit")
    assert "budget limit reached: $0.0600 spent of --max-budget-usd 0.05" in run.message
    assert len(provider.requests) == 1
    assert run.goal["spend_usd"] == 0.06


def test_a_loop_guard_stop_pauses_the_goal_and_one_redirect_covers_all_its_turns(tmp_path: Path):
    failing = "printf '/tmp/go-build1/db_test.go:12:3: undefined: testDB\\n' >&2; exit 1"
    provider = ScriptedProvider(
        *[bash(failing) for _ in range(3)],
        answer("I keep failing."),
        *[bash(failing) for _ in range(3)],
        answer("Report: still failing on testDB."),
    )
    agent, events = make_agent(tmp_path, provider, mode="active", judge=ScriptedJudge(STUCK, STUCK))

    run = GoalDriver(agent, goal(), ScriptedEvaluator(NOT_MET), 30.0).start(CONDITION)

    assert (run.exit_code, run.goal["status"], run.goal["turns"]) == (3, "paused", 2)
    assert [e["action"] for e in events.of("LoopGuard.Judged")] == ["redirect", "stop"]
    assert run.last_turn is not None and run.last_turn.text == "Report: still failing on testDB."
    assert events.of("Goal.Paused")[0]["reason"] == "the loop guard ended the turn"


def test_ctrl_c_while_the_evaluator_thinks_pauses_the_goal(tmp_path: Path):
    agent, _ = make_agent(tmp_path, ScriptedProvider(answer("a")))

    run = GoalDriver(agent, goal(), ScriptedEvaluator(KeyboardInterrupt()), 30.0).start(CONDITION)

    assert (run.exit_code, run.goal["status"]) == (130, "paused")


def test_a_paused_goal_is_restored_from_the_log_and_resumed(tmp_path: Path):
    provider = ScriptedProvider(answer("a"), answer("b"))
    agent, events = make_agent(tmp_path, provider)
    GoalDriver(agent, goal(), ScriptedEvaluator(NOT_MET, KeyboardInterrupt()), 30.0).start(
        CONDITION
    )

    restored = restore_goal(map(parse_record, events.all))

    assert restored is not None
    assert (restored.status, restored.turns, restored.condition) == ("paused", 2, CONDITION)
    assert restored.last is not None and restored.last.verdict == NOT_MET
    provider.add(answer("c"))
    run = GoalDriver(agent, restored, ScriptedEvaluator(MET), 30.0).resume()
    assert (run.exit_code, run.goal["turns"]) == (0, 3)
    resumed = provider.requests[-1].messages[-1].content
    assert "The goal was paused and is resumed now; this is turn 3 of at most 20." in resumed
    assert restore_goal(map(parse_record, events.all)).status == "met"  # type: ignore[union-attr]


def test_a_goal_that_was_running_when_the_process_died_comes_back_paused():
    events = [
        {"type": "Goal.Set", "condition": CONDITION, "max_turns": 5, "prompt": "go"},
        {"type": "Goal.Evaluated", "turn": 1, "verdict": NOT_MET.to_dict(), "spend_usd": 0.2},
    ]

    restored = restore_goal(map(parse_record, events))

    assert restored is not None
    assert (restored.status, restored.turns, restored.spend_usd) == ("paused", 1, 0.2)
    assert restore_goal([]) is None


def test_usage_of_the_scripted_evaluator_is_recorded(tmp_path: Path):
    agent, events = make_agent(tmp_path, ScriptedProvider(answer("a")))

    GoalDriver(agent, goal(), ScriptedEvaluator(MET), 30.0).start(CONDITION)

    evaluated = events.of("Goal.Evaluated")[0]
    assert evaluated["usage"] == Usage(input_tokens=900, output_tokens=40).to_dict()
    assert evaluated["model"] == "test/evaluator" and evaluated["latency_s"] == 0.4


def test_a_goal_paused_on_its_last_turn_ends_when_resumed_without_another(tmp_path: Path):
    provider = ScriptedProvider(answer("a"))
    agent, events = make_agent(tmp_path, provider)
    GoalDriver(agent, goal(max_turns=1), ScriptedEvaluator(KeyboardInterrupt()), 30.0).start(
        CONDITION
    )
    paused = restore_goal(map(parse_record, events.all))
    assert paused is not None and paused.status == "paused"

    run = GoalDriver(agent, paused, ScriptedEvaluator(), 30.0).resume()

    assert (run.exit_code, run.goal["status"]) == (4, "max_turns")
    assert len(provider.requests) == 1


def test_the_evaluator_never_sees_a_secret_the_turn_met(tmp_path: Path):
    token = "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
    password = "DATABASE_PASSWORD=tr0ub4dor-and-3-horses"
    provider = ScriptedProvider(bash(f"printf '{password}\\n'"), answer(f"Logged in with {token}."))
    agent, events = make_agent(tmp_path, provider)
    evaluator = ScriptedEvaluator(MET)

    GoalDriver(agent, goal(), evaluator, 30.0).start(f"push with {token}")

    summary = evaluator.summaries[0]
    assert "## The agent's answer" in summary
    assert token not in summary and "tr0ub4dor-and-3-horses" not in summary
    assert summary.count("[redacted]") >= 3  # the request, the output, the answer
    assert events.of("Goal.Evaluated")[0]["summary"] == summary
