"""A goal's records: set, evaluated after each turn, paused, resumed, ended.

`goal/state.py` restores a goal from them; the `turn` they carry is the goal's count of
turns, not a loop turn's number.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, ClassVar

from caretz.session.records.base import GoalRecord, record

JsonDict = dict[str, Any]


@record
class GoalSet(GoalRecord):
    TYPE: ClassVar[str] = "Goal.Set"
    condition: str = ""
    prompt: str = ""
    max_turns: int = 0
    evaluator: str = ""  # the evaluator's model ref


@record
class GoalResumed(GoalRecord):
    TYPE: ClassVar[str] = "Goal.Resumed"
    turn: int = 0
    max_turns: int = 0


@record
class GoalEvaluating(GoalRecord):
    TYPE: ClassVar[str] = "Goal.Evaluating"
    turn: int = 0
    max_turns: int = 0
    model: str = ""


@record
class GoalEvaluated(GoalRecord):
    TYPE: ClassVar[str] = "Goal.Evaluated"
    turn: int = 0
    max_turns: int = 0
    verdict: JsonDict = field(default_factory=dict)
    error: str | None = None
    model: str = ""
    latency_s: float = 0.0
    usage: JsonDict = field(default_factory=dict)
    cost_usd: float | None = None
    spend_usd: float | None = None
    files_changed: list[str] = field(default_factory=list)
    summary: str = ""  # what the evaluator saw


@record
class GoalPaused(GoalRecord):
    TYPE: ClassVar[str] = "Goal.Paused"
    turn: int = 0
    max_turns: int = 0
    reason: str = ""
    exit_code: int = 0
    message: str = ""
    spend_usd: float | None = None


@record
class GoalEnded(GoalRecord):
    TYPE: ClassVar[str] = "Goal.Ended"
    status: str = ""
    exit_code: int = 0
    message: str = ""
    turns: int = 0
    max_turns: int = 0
    spend_usd: float | None = None
