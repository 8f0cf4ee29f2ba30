"""Goals through the real CLI: a scripted agent and a scripted evaluator on one loopback server."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

from tests.e2e.conftest import AGENT_MODEL, types
from tests.modelserver import Reply, calls, text, tool

EVALUATOR = "goal-judge"
JUDGE = "guard-judge"
CONDITION = "done.txt says ok"
MARK = "[goal] Automated message from caretz, not from the user."


def evaluator_flags() -> list[str]:
    return ["--goal-model", f"anthropic/{EVALUATOR}"]


def verdict(met: bool, reason: str, next_step: str = "", impossible: bool = False) -> Reply:
    return text(
        json.dumps({"met": met, "impossible": impossible, "reason": reason, "next_step": next_step})
    )


def last_user_text(request) -> str:
    content = request.messages[-1]["content"]
    return content if isinstance(content, str) else content[0]["text"]


def test_a_goal_met_on_the_third_turn_exits_0_after_three_evaluations(caretz, server, workspace):
    server.add(
        text("I looked around; nothing written yet."),
        tool("bash", command="echo wrong > done.txt"),
        text("Wrote done.txt."),
        tool("bash", command="echo ok > done.txt && cat done.txt"),
        text("done.txt now says ok."),
    )
    server.add(
        verdict(False, "done.txt does not exist", "create done.txt with the text ok"),
        verdict(False, "done.txt says wrong, not ok", "write ok into done.txt"),
        verdict(True, "cat done.txt printed ok"),
        model=EVALUATOR,
    )

    run = caretz("--goal", CONDITION, *evaluator_flags())

    assert run.code == 0, run.stderr
    assert (workspace / "done.txt").read_text() == "ok\n"
    assert len(server.requests_for(EVALUATOR)) == 3
    agent = server.requests_for(AGENT_MODEL)
    assert agent[0].messages[0]["content"] == CONDITION  # --goal alone: the condition is the prompt
    # The continuation messages, as sent: marked, naming the goal, the reason and the next step.
    second, third = last_user_text(agent[1]), last_user_text(agent[3])
    assert second == (
        f"{MARK} The goal is not met yet; this is turn 2 of at most 20.\n"
        f'Goal: "{CONDITION}"\n'
        "Evaluator: done.txt does not exist\n"
        "Next step: create done.txt with the text ok\n"
        "Carry on toward the goal. When it is met, say what shows it; if it cannot be met, "
        "say why and stop."
    )
    assert "Evaluator: done.txt says wrong, not ok\nNext step: write ok into done.txt" in third
    assert "[goal] turn 1/20 · not met: done.txt does not exist" in run.stderr
    assert "  next step: create done.txt with the text ok" in run.stderr
    assert "[goal] turn 3/20 · met: cat done.txt printed ok" in run.stderr
    assert "[goal] goal met after 3 turns: cat done.txt printed ok" in run.stderr
    # The evaluator saw the tool output that shows the goal met.
    last_summary = server.requests_for(EVALUATOR)[2].messages[0]["content"]
    assert "    | ok" in last_summary and f'## The goal\n"""\n{CONDITION}' in last_summary
    events = caretz.events(run.session_id)
    assert types(events).count("Goal.Evaluated") == 3
    assert [e["type"] for e in events if e["type"].startswith("Goal.")][0] == "Goal.Set"
    evaluated = [e for e in events if e["type"] == "Goal.Evaluated"]
    assert evaluated[2]["summary"] == last_summary
    assert events[-1]["type"] == "Goal.Ended" and events[-1]["status"] == "met"
    shown = caretz("sessions", "show", run.session_id).stdout
    assert "[goal] turn 3/20 · met: cat done.txt printed ok" in shown
    assert "  evaluator: anthropic/goal-judge" in shown


def test_the_json_result_carries_the_goal(caretz, server):
    server.add(text("Done."))
    server.add(verdict(True, "the answer says so"), model=EVALUATOR)

    run = caretz("-p", "write the report", "--goal", "the report is written", *evaluator_flags(),
                 "--output", "json")  # fmt: skip

    assert run.code == 0, run.stderr
    result = json.loads(run.stdout.splitlines()[-1])
    assert result["type"] == "result" and result["status"] == "met"
    assert result["goal"]["condition"] == "the report is written"
    assert (result["goal"]["status"], result["goal"]["turns"]) == ("met", 1)
    assert result["goal"]["last_verdict"]["reason"] == "the answer says so"
    first = server.requests_for(AGENT_MODEL)[0]
    assert first.messages[0]["content"] == "write the report"  # -p is the first turn


def test_an_evaluator_that_times_out_or_answers_garbage_lets_the_goal_go_on(caretz, server):
    caretz.write_config({"profiles": {"general": {"goal": {"judgeTimeout": "1s"}}}})
    server.add(text("one"), text("two"), text("three"))
    server.add(
        Reply(text=json.dumps({"met": True}), delay_s=4),  # too late
        text("Looks good to me!"),
        verdict(True, "all three steps done"),
        model=EVALUATOR,
    )

    run = caretz("--goal", CONDITION, *evaluator_flags())

    assert run.code == 0, run.stderr
    assert "[goal] turn 1/20 · no verdict (timeout after 1s) → carrying on" in run.stderr
    assert (
        "[goal] turn 2/20 · no verdict (unreadable reply: Looks good to me!) → carrying on"
        in run.stderr
    )
    agent = server.requests_for(AGENT_MODEL)
    assert "The evaluator gave no verdict (timeout after 1s)" in last_user_text(agent[1])
    errors = [e["error"] for e in caretz.events(run.session_id) if e["type"] == "Goal.Evaluated"]
    assert errors == ["timeout after 1s", "unreadable reply: Looks good to me!", None]


def test_a_worker_repeating_the_same_answer_is_stopped_by_the_guard_and_the_goal_pauses(
    caretz, server
):
    server.add(*[text("I cannot find the test runner.") for _ in range(3)])
    server.add(*[verdict(False, "no test ran", "find how tests run") for _ in range(3)],
               model=EVALUATOR)  # fmt: skip
    # The guard's stop needs its judge's "stuck" verdict.
    stuck = {"stuck": True, "confidence": 0.9, "reason": "same answer", "try_instead": ""}
    server.add(text(json.dumps(stuck)), model="guard-judge")

    run = caretz("--goal", "the tests pass", *evaluator_flags(), "--loop-guard", "active",
                 "--loop-guard-model", "anthropic/guard-judge")  # fmt: skip

    assert run.code == 3, run.stderr
    assert len(server.requests_for(AGENT_MODEL)) == 3
    assert len(server.requests_for(EVALUATOR)) == 2  # the stopped turn is not evaluated
    assert "same answer 3 turns in a row" in run.stderr
    assert "[goal] goal paused after turn 3/20: the loop guard ended the turn" in run.stderr
    events = caretz.events(run.session_id)
    assert [e["type"] for e in events if e["type"].startswith("Goal.")][-1] == "Goal.Paused"
    assert events[-1]["type"] == "Goal.Paused" or "Goal.Paused" in types(events)


def test_max_turns_ends_the_goal_with_exit_4(caretz, server):
    server.add(text("a"), text("b"))
    server.add(verdict(False, "not yet"), verdict(False, "still not"), model=EVALUATOR)

    run = caretz("--goal", CONDITION, *evaluator_flags(), "--goal-max-turns", "2")

    assert run.code == 4, run.stderr
    assert "[goal] goal not met after 2 turns (goal.maxTurns 2): still not" in run.stderr
    assert len(server.requests_for(AGENT_MODEL)) == 2


def test_a_goal_judged_impossible_exits_5_with_the_reason(caretz, server):
    server.add(text("The deploy needs credentials I do not have."))
    server.add(
        verdict(False, "deploying needs the production password", impossible=True),
        model=EVALUATOR,
    )

    run = caretz("--goal", "the app is deployed", *evaluator_flags())

    assert run.code == 5, run.stderr
    assert (
        "[goal] goal judged impossible after 1 turn: deploying needs the production password"
        in run.stderr
    )


def test_ctrl_c_pauses_the_goal_and_continue_resumes_it(caretz, server, workspace):
    server.add(text("Started."), Reply(text="too slow", delay_s=15))
    server.add(verdict(False, "not finished", "finish it"), model=EVALUATOR)
    child = subprocess.Popen(
        [sys.executable, "-m", "caretz", "--goal", CONDITION, *evaluator_flags()],
        cwd=workspace,
        env=caretz.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while len(server.requests_for(AGENT_MODEL)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=30)

    assert child.returncode == 130, err
    assert "[goal] goal paused after turn 2/20: interrupted" in err

    server.add(text("Finished."))
    server.add(verdict(True, "finished"), model=EVALUATOR)
    resumed = caretz("--continue", *evaluator_flags())

    assert resumed.code == 0, resumed.stderr
    assert "[goal] resumed after turn 2/20" in resumed.stderr
    assert "[goal] turn 3/20 · met: finished" in resumed.stderr
    prompt = last_user_text(server.requests_for(AGENT_MODEL)[-1])
    assert prompt.startswith(f"{MARK} The goal was paused and is resumed now; this is turn 3")
    assert "Evaluator: not finished\nNext step: finish it" in prompt


def test_the_plan_tool_shows_in_detailed_output_and_in_the_judges_summary(
    caretz, server, workspace
):
    plan = [
        {"content": "run the failing test", "status": "done"},
        {"content": "find where testDB is declared", "status": "in_progress"},
    ]
    failing = "echo 'db_test.go:12: undefined: testDB' >&2; exit 1"
    server.add(
        calls(("todo", {"todos": plan})),
        *[tool("bash", command=failing) for _ in range(3)],
        text("Still undefined."),
    )
    not_stuck = {"stuck": False, "confidence": 0.2, "reason": "early", "try_instead": ""}
    server.add(text(json.dumps(not_stuck)), model=JUDGE)

    run = caretz(
        "-p", "make the tests pass", "--loop-guard", "active",
        "--loop-guard-model", f"anthropic/{JUDGE}", "--output", "detailed",
    )  # fmt: skip

    assert run.code == 0, run.stderr
    assert "✓ todo plan: 1 of 2 done" in run.stderr
    assert "\n  [x] run the failing test\n  [>] find where testDB is declared\n" in run.stderr
    summary = server.requests_for(JUDGE)[0].messages[0]["content"]
    assert (
        "## The agent's plan (1 of 2 done)\n[x] run the failing test\n"
        "[>] find where testDB is declared"
    ) in summary
    events = caretz.events(run.session_id)
    called = [e for e in events if e["type"] == "Tool.Called" and e["call"]["name"] == "todo"]
    assert called[0]["call"]["arguments"] == {"todos": plan}


def test_bad_goal_input_exits_2_with_one_line_before_any_model_call(caretz, server):
    empty = caretz("--goal", "  ")
    unknown = caretz("--goal", CONDITION, "--goal-model", "nowhere/model-x")
    zero = caretz("--goal", CONDITION, "--goal-max-turns", "0")
    unknown_alone = caretz("-p", "hi", "--goal-model", "nowhere/model-x")

    for run in (empty, unknown, zero, unknown_alone):
        assert run.code == 2
        assert len(run.stderr.strip().splitlines()) == 1, run.stderr
        assert run.stderr.startswith("caretz: ")
    assert "--goal needs a condition" in empty.stderr
    assert "--goal-model: unknown provider 'nowhere'" in unknown.stderr
    assert "--goal-max-turns 0" in zero.stderr
    assert server.requests == []
    assert not (caretz.data_dir / "sessions").exists()
