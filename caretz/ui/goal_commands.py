"""`/goal` and `/loop` in the interactive session.

The commands change the session's state and queue work; the prompt loop
(`Repl`) runs it, so a goal's turns and a loop's runs go through the same live
view, Ctrl-C handling and turn summary as a typed message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from caretz.inbound import ascii_number
from caretz.text import one_line

if TYPE_CHECKING:
    from caretz.goal.state import Goal, GoalVerdict
    from caretz.ui.session_control import SessionControl

GOAL_WORDS = ("pause", "resume", "clear")


@dataclass(frozen=True)
class StartGoal:
    condition: str


@dataclass(frozen=True)
class ResumeGoal:
    pass


GoalWork = StartGoal | ResumeGoal


def goal_command(repl: SessionControl, argument: str) -> None:
    """/goal shows the goal; /goal CONDITION sets one and starts; pause, resume, clear."""
    word = argument.strip().lower()
    goal = repl.goal
    if not argument.strip():
        show_goal(repl)
    elif word == "resume":
        if goal is None or goal.status != "paused":
            repl.error("no paused goal to resume: /goal CONDITION sets one")
            return
        repl.queued = ResumeGoal()
    elif word == "pause":
        pause(repl, goal)
    elif word == "clear":
        clear(repl, goal)
    else:
        repl.queued = StartGoal(argument.strip())


def pause(repl: SessionControl, goal: Goal | None) -> None:
    if goal is None or not goal.is_open:
        repl.error("no goal to pause: /goal CONDITION sets one")
    elif goal.status == "paused":
        repl.info("the goal is already paused: /goal resume carries on")
    else:
        repl.session.pause_goal("paused with /goal pause")


def clear(repl: SessionControl, goal: Goal | None) -> None:
    if goal is None or not goal.is_open:
        repl.info("no goal to clear")
        return
    repl.session.clear_goal()


def show_goal(repl: SessionControl) -> None:
    goal = repl.goal
    if goal is None:
        repl.info("no goal: /goal CONDITION works until CONDITION holds")
        return
    repl.info(f"goal: {goal.condition}")
    parts = [goal.status.replace("_", " "), f"turn {goal.turns}/{goal.max_turns}"]
    last = goal.last
    if last is not None:
        said = f"no verdict ({last.error})" if last.error else _verdict_text(last.verdict)
        parts.append(f"last verdict: {said}")
    if goal.spend_usd is not None:
        parts.append(f"spent ${goal.spend_usd:.2f}")
    repl.info("  " + " · ".join(parts))
    if goal.status == "paused":
        repl.info("  /goal resume carries on · /goal clear drops it")


def _verdict_text(verdict: GoalVerdict) -> str:
    state = "met" if verdict.met else "impossible" if verdict.impossible else "not met"
    reason = one_line(verdict.reason, 120)
    return f"{state}: {reason}" if reason else state


# -- /loop -----------------------------------------------------------------------------


def loop_command(repl: SessionControl, argument: str) -> None:
    """/loop lists; /loop INTERVAL PROMPT adds; /loop stop N stops."""
    head, _, rest = argument.strip().partition(" ")
    if not head:
        list_loops(repl)
    elif head.lower() == "stop":
        stop_loop(repl, rest.strip())
    else:
        try:
            loop = repl.loops.add(head, rest)
        except ValueError as error:
            repl.error(f"{error} (nothing was scheduled)")
            return
        repl.info(f"loop {loop.number}: every {loop.every}, while the session is idle: "
                  f"{one_line(loop.prompt, 80)} (/loop stop {loop.number} stops it)")  # fmt: skip


def list_loops(repl: SessionControl) -> None:
    if not repl.loops.loops:
        repl.info("no loops: /loop 10m PROMPT runs PROMPT every 10 minutes while idle")
        return
    for loop in repl.loops.loops:
        repl.info(f"{repl.loops.describe(loop)} · {one_line(loop.prompt, 60)}")


def stop_loop(repl: SessionControl, number: str) -> None:
    which = ascii_number(number)
    if which is None:
        repl.error("/loop stop needs a loop's number: /loop lists them")
        return
    try:
        loop = repl.loops.stop(which)
    except KeyError:
        repl.error(f"no loop {number}: /loop lists them")
        return
    repl.info(f"stopped loop {loop.number} ({one_line(loop.prompt, 60)})")
