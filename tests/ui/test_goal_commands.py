"""/goal in a real session (no terminal): a goal that ends, one that pauses, and /resume
bringing a paused goal back."""

from __future__ import annotations

import json

from caretz.ui.slash import dispatch
from tests.modelserver import ModelServer, error, text
from tests.ui.test_slash import env, output, repl  # noqa: F401 (fixtures)

NOT_MET = {"met": False, "impossible": False, "reason": "no tests ran", "next_step": "run them"}


def run(repl, line: str) -> str:  # noqa: F811
    before = len(output(repl))
    assert dispatch(repl, line)
    repl.run_queued()
    return output(repl)[before:]


def max_turns(repl, turns: int) -> None:  # noqa: F811
    settings = repl.session.settings
    repl.session.settings = settings.with_profile(
        goal=settings.goal.model_copy(update={"max_turns": turns})
    )


def test_a_goal_out_of_turns_has_ended(repl, server: ModelServer):  # noqa: F811
    server.add(text("Working on it."), text(json.dumps(NOT_MET)), model="claude-main")
    max_turns(repl, 1)

    said = run(repl, "/goal the tests pass")

    assert "[goal] turn 1/1 · not met: no tests ran" in said
    assert "[goal] goal not met after 1 turn (goal.maxTurns 1): no tests ran" in said
    assert repl.goal is not None and repl.goal.status == "max_turns"
    assert "no goal to clear" in run(repl, "/goal clear")
    assert "no paused goal to resume" in run(repl, "/goal resume")
    assert "max turns · turn 1/1 · last verdict: not met: no tests ran" in run(repl, "/goal")


def test_a_paused_goal_comes_back_with_resume(repl, server: ModelServer):  # noqa: F811
    server.add(
        text("Working on it."),
        text(json.dumps(NOT_MET)),
        error(400, "the request was refused"),
        model="claude-main",
    )
    first = repl.session.id

    said = run(repl, "/goal the suite is green")

    assert "[goal] goal paused after turn 2/20: the turn failed" in said
    assert "already paused" in run(repl, "/goal pause")
    run(repl, "/clear")
    assert repl.goal is None
    said = run(repl, f"/resume {first}")
    assert repl.goal is not None and repl.goal.condition == "the suite is green"
    assert repl.goal.status == "paused"
    assert "paused goal: the suite is green (/goal resume carries on)" in said
    shown = run(repl, "/goal")
    assert "goal: the suite is green" in shown
    assert "paused · turn 2/20 · last verdict: not met: no tests ran" in shown
    assert "[goal] goal cleared" in run(repl, "/goal clear") and repl.goal is None
