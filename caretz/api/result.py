"""What a run returns: `RunResult`, with the permission denials and the judge's verdicts.

`RunResult.to_dict()` is the result object `caretz -p --output json` prints last.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from caretz.agent.outcomes import Outcome
from caretz.messages import Usage
from caretz.usage_error import RUNTIME_FAILURE, USAGE_ERROR


@dataclass(frozen=True)
class PermissionDenial:
    """A tool call that was refused because it needed approval: what it was, why, and
    (when nobody could be asked) the allow rules that would have let it run."""

    tool: str
    input: str
    reason: str
    allow_rules: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, denial: Mapping[str, Any]) -> PermissionDenial:
        """From the session's record of it (`SessionPermissions.denials`)."""
        rules = tuple(denial.get("allow_rules") or ())
        return cls(denial["tool"], denial["input"], denial["reason"], rules)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"tool": self.tool, "input": self.input, "reason": self.reason}
        if self.allow_rules:
            data["allow_rules"] = list(self.allow_rules)
        return data


@dataclass(frozen=True, kw_only=True)
class GuardVerdict:
    """One answer of the loop guard's judge: whether the turn looked stuck, and what the
    guard did about it (`action`: continue, redirect or stop; `applied`: False in shadow
    mode, or when the guard carried on)."""

    trigger: str
    headline: str
    stuck: bool
    confidence: float
    reason: str
    try_instead: str
    action: str
    applied: bool
    model: str | None = None
    error: str | None = None  # the judge did not answer (a timeout, an unreadable reply)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True, kw_only=True)
class RunResult:
    """How a run ended, as the work's own `Outcome` (`status` and `exit_code` as the
    README's exit codes table says: done 0, error 1 (2 for a key, model or images the
    provider refused), usage_error 2 (refused before anything was sent), loop_guard 3,
    limit 4, hook 6, interrupted 130, …; the agent's final answer; a goal's state), and
    what the run used beside it: tokens, cost (None when a model has no known price), tool
    calls, the calls refused for want of approval, the judge's verdicts. `usage` and `cost_usd` count every model call, the loop guard's judge's
    too; `judge_usage` and `judge_cost_usd` are the judge's part of them, `agents` each
    agent's (the main one's and each subagent's, by name). The usage and
    counts are this run's, not the session's."""

    session_id: str | None
    outcome: Outcome
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    tool_calls: int = 0
    duration_s: float = 0.0
    permission_denials: tuple[PermissionDenial, ...] = ()
    permission_hint: str | None = None  # how to allow what was denied, in one line
    guard_verdicts: tuple[GuardVerdict, ...] = ()
    judge_usage: Usage = field(default_factory=Usage)
    judge_cost_usd: float | None = None
    # Each agent's share of `usage` and `cost_usd` (the judge's aside), by name: "main"
    # and each named subagent: model, tokens, cost_usd, requests.
    agents: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def status(self) -> str:
        return self.outcome.status

    @property
    def exit_code(self) -> int:
        return self.outcome.exit_code

    @property
    def message(self) -> str:
        """Why it ended, for people ("" when done)."""
        return self.outcome.message

    @property
    def text(self) -> str:
        """The agent's final answer (its report after a loop-guard stop)."""
        return self.outcome.text

    @property
    def goal(self) -> Mapping[str, Any] | None:
        """A goal's state, for a run that pursued one."""
        return self.outcome.goal

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def to_dict(self) -> dict[str, Any]:
        """The `--output json` result object (its `"type": "result"` aside)."""
        data: dict[str, Any] = {
            "session_id": self.session_id,
            "status": self.status,
            "exit_code": self.exit_code,
            "message": self.message,
            "text": self.text,
            "tool_calls": self.tool_calls,
            "usage": {
                **self.usage.to_dict(),
                "judge": self.judge_usage.to_dict(),
                "agents": {name: dict(share) for name, share in self.agents.items()},
            },
            "cost_usd": self.cost_usd,
            "judge_cost_usd": self.judge_cost_usd,
            "duration_s": round(self.duration_s, 3),
            "permission_denials": [denial.to_dict() for denial in self.permission_denials],
            "guard_verdicts": [verdict.to_dict() for verdict in self.guard_verdicts],
        }
        if self.permission_hint:
            data["permission_hint"] = self.permission_hint
        if self.goal is not None:
            data["goal"] = dict(self.goal)
        return data


def refused_before_start(message: str) -> RunResult:
    """The result of a run refused before it started (exit 2): no session, nothing used."""
    outcome = Outcome(status="usage_error", exit_code=USAGE_ERROR, message=message, sent=False)
    return RunResult(session_id=None, outcome=outcome)


def failed_outside_work(message: str) -> RunResult:
    """The result of a run that failed outside its work (exit 1): caretz could not write
    its data folder as the session opened or closed."""
    outcome = Outcome(status="error", exit_code=RUNTIME_FAILURE, message=message)
    return RunResult(session_id=None, outcome=outcome)
