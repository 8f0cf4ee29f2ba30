"""What the goal evaluator sees: the goal, then the latest turn as the loop guard's judge
would see it (the same sections, from the same record), its answer and recent output.

Bounded whatever the turn's length, and redacted before it leaves the machine.
"""

from __future__ import annotations

from caretz.goal.state import SHOWN_FILES, Goal
from caretz.guard.normalize import tool_label
from caretz.guard.record import TurnRecord
from caretz.guard.summary import (
    edited_section,
    failures_section,
    last_calls_section,
    plan_section,
    quoted,
    size_section,
)
from caretz.secrets import redact
from caretz.text import shorten

SHOWN_VERDICTS = 5
SHOWN_OUTPUTS = 3  # the latest tool results shown with their output's tail

_CONDITION_CHARS = 1500
_PROMPT_CHARS = 800
_ANSWER_CHARS = 2500
_OUTPUT_LINES = 15
_OUTPUT_CHARS = 1200


def build_goal_summary(goal: Goal, record: TurnRecord, answer: str) -> str:
    """The goal and its latest turn in a few thousand tokens at most; secrets redacted."""
    sections = [
        _goal_section(goal),
        _turn_section(goal, record),
        plan_section(record),
        _answer_section(answer),
        size_section(record),
        last_calls_section(record),
        _outputs_section(record),
        failures_section(record),
        edited_section(record),
        _files_section(goal),
        _verdicts_section(goal),
    ]
    return redact("\n\n".join(section for section in sections if section))


def _goal_section(goal: Goal) -> str:
    lines = ["## The goal", quoted(goal.condition, _CONDITION_CHARS)]
    if goal.prompt and goal.prompt.strip() != goal.condition.strip():
        lines += ["The request that started the work:", quoted(goal.prompt, _PROMPT_CHARS)]
    return "\n".join(lines)


def _turn_section(goal: Goal, record: TurnRecord) -> str:
    who = "the user" if record.ctx.from_user else "caretz (an automated continuation)"
    return (
        f"## This turn: {goal.turns} of at most {goal.max_turns}\n"
        f"It was started by {who} with:\n{quoted(record.ctx.task, _PROMPT_CHARS)}"
    )


def _answer_section(answer: str) -> str:
    if not answer.strip():
        return "## The agent's answer at the end of the turn\n(none)"
    return f"## The agent's answer at the end of the turn\n{quoted(answer, _ANSWER_CHARS)}"


def _outputs_section(record: TurnRecord) -> str:
    """The tail of the latest results: a test run's summary lines, a build's errors."""
    latest = list(record.last_calls)[-SHOWN_OUTPUTS:]
    shown = [obs for obs in latest if obs.output.strip()]
    if not shown:
        return ""
    lines = ["## The output of the latest calls (their last lines)"]
    for obs in shown:
        status = "failed" if obs.failed else "ok"
        exit_code = f", exit {obs.exit_code}" if obs.exit_code is not None else ""
        lines.append(f"#{obs.index + 1} {tool_label(obs.tool)} ({status}{exit_code}):")
        tail = obs.output.rstrip().splitlines()[-_OUTPUT_LINES:]
        text = "\n".join(tail)
        if len(text) > _OUTPUT_CHARS:
            text = "…" + text[-_OUTPUT_CHARS:]
        lines += [f"    | {line}" for line in text.splitlines()]
    return "\n".join(lines)


def _files_section(goal: Goal) -> str:
    if not goal.files_changed:
        return ""
    files = list(goal.files_changed)
    shown = ", ".join(shorten(path, 80) for path in files[-SHOWN_FILES:])
    more = f", latest {SHOWN_FILES} shown" if len(files) > SHOWN_FILES else ""
    return f"## Files changed since the goal was set ({len(files)}{more})\n{shown}"


def _verdicts_section(goal: Goal) -> str:
    earlier = goal.verdicts[-SHOWN_VERDICTS:]
    if not earlier:
        return ""
    lines = ["## Your earlier verdicts on this goal"]
    for entry in earlier:
        if entry.error:
            lines.append(f"- turn {entry.turn}: no verdict ({entry.error})")
        else:
            lines.append(f"- turn {entry.turn}: not met: {shorten(entry.verdict.reason, 200)}")
    return "\n".join(lines)
