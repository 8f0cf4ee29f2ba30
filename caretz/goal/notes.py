"""The automated messages that carry a goal on, and the words for how a goal ends."""

from __future__ import annotations

from caretz.goal.state import Goal, GoalVerdict
from caretz.text import one_line

MARK = "[goal] Automated message from caretz, not from the user."
_CLOSING = (
    "Carry on toward the goal. When it is met, say what shows it; if it cannot be met, "
    "say why and stop."
)


def continuation_message(goal: Goal, verdict: GoalVerdict, error: str | None) -> str:
    """The next turn's message after a "not met" (or no) verdict."""
    lines = [
        f"{MARK} The goal is not met yet; this is turn {goal.turns + 1} of at most "
        f"{goal.max_turns}.",
        f'Goal: "{goal.condition}"',
    ]
    lines += _verdict_lines(verdict, error)
    lines.append(_CLOSING)
    return "\n".join(lines)


def resume_message(goal: Goal) -> str:
    """The first turn's message when a paused goal is resumed without a new prompt."""
    lines = [
        f"{MARK} The goal was paused and is resumed now; this is turn {goal.turns + 1} of at "
        f"most {goal.max_turns}.",
        f'Goal: "{goal.condition}"',
    ]
    last = goal.last
    if last is not None:
        lines += _verdict_lines(last.verdict, last.error)
    lines.append(_CLOSING)
    return "\n".join(lines)


def _verdict_lines(verdict: GoalVerdict, error: str | None) -> list[str]:
    if error is not None:
        return [f"The evaluator gave no verdict ({error}); check the goal yourself."]
    lines = [f"Evaluator: {one_line(verdict.reason) or 'not met.'}"]
    if verdict.next_step.strip():
        lines.append(f"Next step: {one_line(verdict.next_step)}")
    return lines


def ended_message(goal: Goal, reason: str) -> str:
    """Why the goal ended, in one line, for its end line and the run's result."""
    turns = f"{goal.turns} turn{'s' if goal.turns != 1 else ''}"
    status = goal.status
    if status == "met":
        return f"goal met after {turns}: {reason}".rstrip(": ")
    if status == "impossible":
        return f"goal judged impossible after {turns}: {reason}".rstrip(": ")
    if status == "max_turns":
        return f"goal not met after {turns} (goal.maxTurns {goal.max_turns}): {reason}".rstrip(": ")
    if status == "cleared":
        return "goal cleared"
    return f"goal stopped: {reason}"


def paused_message(goal: Goal, why: str) -> str:
    return f"goal paused after turn {goal.turns}/{goal.max_turns}: {why}"
