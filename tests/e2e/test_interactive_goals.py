"""`/goal` and `/loop` in the real interactive session, in a pseudo-terminal."""

from __future__ import annotations

import json

from tests.e2e.conftest import AGENT_MODEL
from tests.modelserver import ModelServer, text, tool

EVALUATOR = "goal-judge"


def verdict(met: bool, reason: str, next_step: str = "") -> object:
    body = {"met": met, "impossible": False, "reason": reason, "next_step": next_step}
    return text(json.dumps(body))


def test_goal_runs_until_met_then_shows_where_it_stands(terminal, server: ModelServer, caretz):
    server.add(
        text("Nothing there yet."),
        tool("bash", command="echo ok > done.txt"),
        text("Wrote done.txt."),
    )
    server.add(
        verdict(False, "done.txt is missing", "create done.txt"),
        verdict(True, "done.txt was written"),
        model=EVALUATOR,
    )
    term = terminal("--goal-model", f"anthropic/{EVALUATOR}")

    term.type("/goal done.txt exists")
    term.expect(r"\[goal\] set: done.txt exists")
    term.expect(r"\[goal\] turn 1/20 · not met: done.txt is missing")
    term.expect("next step: create done.txt")
    term.expect(r"\[goal\] turn 2/20 · met: done.txt was written")
    term.expect(r"\[goal\] goal met after 2 turns")
    term.type("/goal")
    term.expect("goal: done.txt exists")
    term.expect(r"met · turn 2/20 · last verdict: met: done.txt was written")
    term.type("/goal clear")
    term.expect("no goal to clear")
    session_id = term.ctrl_d()

    agent = server.requests_for(AGENT_MODEL)
    assert agent[0].messages[0]["content"] == "done.txt exists"
    continuation = agent[1].messages[-1]["content"]
    continuation = continuation if isinstance(continuation, str) else continuation[0]["text"]
    assert continuation.startswith("[goal] Automated message from caretz, not from the user.")
    assert len(server.requests_for(EVALUATOR)) == 2
    events = caretz.events(session_id)
    assert [e["status"] for e in events if e["type"] == "Goal.Ended"] == ["met"]


def test_ctrl_c_pauses_a_goal_that_resume_carries_on(terminal, server: ModelServer, caretz):
    server.add(
        tool("bash", command="sleep 300"),
        text("Finished the job."),
    )
    server.add(verdict(True, "the job is finished"), model=EVALUATOR)
    term = terminal("--goal-model", f"anthropic/{EVALUATOR}")

    term.type("/goal the job is finished")
    term.expect("bash sleep 300")
    term.child.sendintr()
    term.expect(r"\[goal\] goal paused after turn 1/20: interrupted")
    term.type("/goal")
    term.expect(r"paused · turn 1/20")
    term.expect("/goal resume carries on")
    term.type("/goal resume")
    term.expect(r"\[goal\] resumed after turn 1/20")
    term.expect(r"\[goal\] turn 2/20 · met: the job is finished")
    term.ctrl_d()


def test_loop_runs_a_prompt_every_interval_while_idle_and_stops(terminal, server: ModelServer):
    # Spare replies: on a loaded machine a third run may start before /loop stop is typed.
    server.add(text("Tick one."), text("Tick two."), text("Tick three."), text("Tick four."))
    term = terminal()

    term.type("/loop 2x say tick")
    term.expect("not an interval such as 30s, 10m, 2h or 1h30m")
    term.type("/loop 2s say tick")
    term.expect("loop 1: every 2s, while the session is idle: say tick")
    term.expect(r"\[loop 1\] every 2s:.*say tick")
    term.expect("Tick one.")
    term.expect(r"\[loop 1\] every 2s:.*say tick")
    term.expect("Tick two.")
    term.type("/loop")
    term.expect(r"loop 1 · every 2s · next in \d+s · [234] runs · say tick")
    term.type("/loop stop 1")
    term.expect(r"stopped loop 1 \(say tick\)")
    term.type("/loop")
    term.expect("no loops")
    term.ctrl_d()

    prompts = [r.messages[-1]["content"] for r in server.requests_for(AGENT_MODEL)]
    assert len(prompts) >= 2 and set(prompts) == {"say tick"}
