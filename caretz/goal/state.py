"""A goal's state: its condition, where it stands, and how it is restored from the log.

The session log is the record: `Goal.Set`, `Goal.Evaluated`, `Goal.Paused`,
`Goal.Resumed` and `Goal.Ended` events, folded by `restore_goal`, give back the
goal of a resumed session, paused if the process ended while it ran.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from caretz.session.records.base import Record
from caretz.session.records.goal import GoalEnded, GoalEvaluated, GoalPaused, GoalResumed, GoalSet

Status = Literal["active", "paused", "met", "impossible", "max_turns", "limit", "cleared"]
OPEN: tuple[Status, ...] = ("active", "paused")
SHOWN_FILES = 15


@dataclass(frozen=True)
class GoalVerdict:
    """The evaluator's answer about one turn."""

    met: bool
    impossible: bool = False
    reason: str = ""
    next_step: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "met": self.met,
            "impossible": self.impossible,
            "reason": self.reason,
            "next_step": self.next_step,
        }


NOT_MET = GoalVerdict(met=False)


@dataclass
class TurnVerdict:
    """The evaluator's word on one turn."""

    turn: int
    verdict: GoalVerdict
    error: str | None = None  # no verdict (timeout, error, unreadable reply)


@dataclass(kw_only=True)
class Goal:
    condition: str
    max_turns: int
    prompt: str  # what started the work: the user's prompt, or the condition itself
    status: Status = "active"
    turns: int = 0  # the goal's turns so far, the one that started it included
    verdicts: list[TurnVerdict] = field(default_factory=list)
    spend_usd: float | None = 0.0  # the agent's turns and priced evaluator calls; None: unknown
    files_changed: dict[str, None] = field(default_factory=dict)  # ordered set, newest last

    @property
    def is_open(self) -> bool:
        return self.status in OPEN

    @property
    def last(self) -> TurnVerdict | None:
        return self.verdicts[-1] if self.verdicts else None

    def add_spend(self, cost: float | None) -> None:
        if cost is None or self.spend_usd is None:
            self.spend_usd = None
        else:
            self.spend_usd += cost

    def note_files(self, paths: Iterable[str]) -> None:
        for path in paths:
            self.files_changed.pop(path, None)
            self.files_changed[path] = None

    def to_dict(self) -> dict[str, Any]:
        """What `--output json`'s result and `/goal` show."""
        last = self.last
        return {
            "condition": self.condition,
            "status": self.status,
            "turns": self.turns,
            "max_turns": self.max_turns,
            "last_verdict": last.verdict.to_dict() if last is not None else None,
            "last_error": last.error if last is not None else None,
            "spend_usd": self.spend_usd,
        }


def restore_goal(events: Iterable[Record]) -> Goal | None:
    """The session's last goal as its events left it; one that was running is paused."""
    goal: Goal | None = None
    for event in events:
        if isinstance(event, GoalSet):
            goal = Goal(
                condition=event.condition, max_turns=int(event.max_turns), prompt=event.prompt
            )
        elif goal is not None:
            _apply(goal, event)
    if goal is not None and goal.status == "active":
        goal.status = "paused"
    return goal


def _apply(goal: Goal, event: Record) -> None:
    if isinstance(event, GoalEvaluated):
        verdict = GoalVerdict(**event.verdict)
        goal.turns = int(event.turn)
        goal.verdicts.append(TurnVerdict(goal.turns, verdict, event.error))
        goal.spend_usd = event.spend_usd
        goal.note_files(event.files_changed or [])
    elif isinstance(event, GoalPaused):
        goal.status = "paused"
        goal.turns = int(event.turn if event.written("turn") else goal.turns)
        goal.spend_usd = event.spend_usd if event.written("spend_usd") else goal.spend_usd
    elif isinstance(event, GoalResumed):
        goal.status = "active"
    elif isinstance(event, GoalEnded):
        goal.status = cast(Status, event.status)
