"""The guard's plain data: what it observes, what its checks fire, what its judge says.

The decisions the turn loop acts on live in `guard/seam.py`.
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from caretz.lazy_dataclass import lazy_dataclass
from caretz.messages import ToolCall, Usage
from caretz.plan import Plan

if TYPE_CHECKING:
    from caretz.session.records.loop import ToolReturned

Mode = Literal["off", "shadow", "active"]


@lazy_dataclass(frozen=True, kw_only=True)
class TurnContext:
    task: str  # the user's request for this turn
    model_ref: str  # "provider/model" the session is on right now
    previous_request: str | None = None  # for short follow-ups such as "continue"
    previous_answer: str | None = None
    # False for automated messages (loop auto-resume): they must not reset
    # counters that only a real user message resets.
    from_user: bool = True
    agent_name: str = "main"  # subagents run their own turns under their name
    depth: int = 0  # subagent nesting depth
    plan: Plan = ()  # the agent's plan (its last `todo` list) as the turn starts
    # An automated turn that carries on the same piece of work (a goal's next
    # turn): for the redirect-once rule it is one turn with the turns before it.
    continuation: bool = False


@lazy_dataclass(frozen=True, kw_only=True)
class ToolObservation:
    index: int  # 0-based position of the call in the turn
    tool: str
    args: dict[str, Any]
    output: str
    failed: bool | None  # None = unknown (replayed trajectories without exit codes)
    exit_code: int | None = None
    duration_s: float = 0.0
    files_changed: tuple[str, ...] = ()

    @classmethod
    def from_record(cls, result: ToolReturned, call: ToolCall | None = None) -> ToolObservation:
        """What a logged call stands for, from its `Tool.Result` record and its call: how a
        goal's recorder and a replay see again what the turn handed the guard."""
        return cls(
            index=int(result.index or 0),
            tool=result.name or (call.name if call is not None else "unknown"),
            args=dict(call.arguments) if call is not None else {},
            output=str(result.output or ""),
            failed=not result.ok if result.written("ok") else None,
            exit_code=result.exit_code,
            duration_s=float(result.duration_s or 0.0),
            files_changed=tuple(result.files_changed or ()),
        )


@lazy_dataclass(frozen=True, kw_only=True)
class Firing:
    """A cheap check fired. `severity` says what the guard does with it."""

    detector: str  # "repeat", "failure-rate", "check-every", "identical-call", ...
    fingerprint: str  # what repeated, normalized ("Bash: <path>/db_test.go:N: undefined: testDB")
    headline: str  # for "[loop-guard] judging: <headline>" ("repeat: 3× Bash: …")
    severity: Literal["judge", "warn", "block", "stop"] = "judge"
    step: int | None = None  # index of the observation that fired, if any
    message: str = ""  # for warn/block/stop: the text the model (or user) is shown
    # What was counted, for the note: 3 (times the failure came back), 8 (of
    # `out_of` = 12 calls failed), 20 (calls since the last check); 0 when nothing was.
    count: int = 0
    out_of: int = 0
    # The normalized failure the firing is about, when it counts one failure
    # ("Bash: <path>/db_test.go:N: undefined: testDB"); "" otherwise. A verdict on
    # it restarts that failure's count in every check that counts it.
    failure: str = ""
    # A stop that acts at once, without asking the judge: a hard cap the user set
    # (tool-budget). Stops from a stream are always immediate; every other stop
    # asks the judge first whenever one can answer.
    immediate: bool = False
    # What a "not stuck" verdict on this firing holds (`guard/holds.py`): the check's
    # name plus this (identical-call: the call and its result; alternation: the
    # cycle), or plus the fingerprint when it is "".
    pattern: str = ""
    # How big the pattern has grown this turn (occurrences, rounds, the length of a
    # stretch); 0: the guard counts the check's firings on the pattern instead. A
    # held pattern asks again once this has doubled since the verdict.
    size: int = 0
    # The size at which a "not stuck" verdict on the pattern expires, when its check
    # names one (repeat: another repeatThreshold; identical-call: not before its stop
    # level); 0: when the pattern has doubled.
    hold_until: int = 0
    # False for a check that is not about a pattern (the periodic check): a verdict
    # never holds it.
    holdable: bool = True


@lazy_dataclass(frozen=True)
class Verdict:
    stuck: bool
    confidence: float
    reason: str = ""
    try_instead: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "stuck": self.stuck,
            "confidence": self.confidence,
            "reason": self.reason,
            "try_instead": self.try_instead,
        }


def not_stuck(confidence: float = 0.0) -> Verdict:
    """The verdict that leaves the turn alone: a "not stuck" answer, or no answer at all."""
    return Verdict(stuck=False, confidence=confidence)


@lazy_dataclass(frozen=True, kw_only=True)
class JudgeResult:
    verdict: Verdict
    model: str
    latency_s: float
    usage: Usage = field(default_factory=Usage)
    error: str | None = None  # timeout / error / unreadable reply: verdict is "not stuck"

    @classmethod
    def no_verdict(
        cls, model: str, latency_s: float, error: str, usage: Usage | None = None
    ) -> JudgeResult:
        """A judge call that gave no usable answer: it counts as "not stuck"."""
        return cls(
            verdict=not_stuck(),
            model=model,
            latency_s=latency_s,
            usage=usage or Usage(),
            error=error,
        )


class Judge(Protocol):
    def __call__(self, summary: str, timeout_s: float) -> JudgeResult: ...
