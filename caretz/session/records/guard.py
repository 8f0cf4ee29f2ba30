"""The loop guard's records: what fired, what the judge was asked and answered, and what
the guard did about it (in active mode) or would have done (shadow)."""

from __future__ import annotations

from dataclasses import field
from typing import Any, ClassVar

from caretz.session.records.base import LoopGuardRecord, optional, record

JsonDict = dict[str, Any]


@record
class LoopGuardFired(LoopGuardRecord):
    TYPE: ClassVar[str] = "LoopGuard.Fired"
    detector: str = ""
    fingerprint: str = ""
    headline: str = ""
    severity: str = "judge"
    step: int | None = None
    message: str = ""
    mode: str = ""
    action: str = ""  # what it leads to: "warn", "block", "judge", "redirect", "stop"
    applied: bool = True


@record
class LoopGuardJudging(LoopGuardRecord):
    TYPE: ClassVar[str] = "LoopGuard.Judging"
    trigger: str = ""
    headline: str = ""
    step: int | None = None
    also: list[str] = field(default_factory=list)  # the other firings asked about


@record
class LoopGuardJudged(LoopGuardRecord):
    TYPE: ClassVar[str] = "LoopGuard.Judged"
    trigger: str = ""
    headline: str = ""
    triggers: list[str] = field(default_factory=list)
    step: int | None = None
    summary: str = ""  # what the judge saw
    verdict: JsonDict = field(default_factory=dict)
    model: str = ""
    latency_s: float = 0.0
    usage: JsonDict = field(default_factory=dict)
    error: str | None = None
    mode: str = ""
    action: str = ""  # "continue", "redirect" or "stop"
    applied: bool = True
    note: str | None = None  # the redirect note
    unsure: bool = False


@record
class LoopGuardOutcome(LoopGuardRecord):
    """What the guard did about a firing: the fields its outcome records share."""

    detector: str = ""
    headline: str = ""
    step: int | None = None
    mode: str = ""


@record
class LoopGuardRedirected(LoopGuardOutcome):
    TYPE: ClassVar[str] = "LoopGuard.Redirected"
    note: str = ""
    judged: bool = False
    no_judge: str | None = optional()  # why a stop level acted without the judge


@record
class LoopGuardStopped(LoopGuardOutcome):
    TYPE: ClassVar[str] = "LoopGuard.Stopped"
    notice: str = ""
    judged: bool = False
    no_judge: str | None = optional()


@record
class LoopGuardWarned(LoopGuardOutcome):
    TYPE: ClassVar[str] = "LoopGuard.Warned"
    message: str = ""


@record
class LoopGuardCut(LoopGuardOutcome):
    """A looping stream cut short."""

    TYPE: ClassVar[str] = "LoopGuard.Cut"
    reason: str = ""


@record
class LoopGuardBlocked(LoopGuardOutcome):
    """A tool call refused: by the guard (with `step` and `mode`), or by the session's
    `disallowedTools` (with the `rule` key and the `pattern` it matched, written in
    another order)."""

    TYPE: ClassVar[str] = "LoopGuard.Blocked"
    ORDERS: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("detector", "headline", "tool", "rule", "pattern", "reason"),
    )
    reason: str = ""
    tool: str | None = None
    rule: str | None = optional()
    pattern: str | None = optional()

    def omits(self, name: str) -> bool:
        return self.rule is not None and name in ("step", "mode")


@record
class LoopGuardResuming(LoopGuardRecord):
    """An automatic resume after a loop stop (`autoResume`)."""

    TYPE: ClassVar[str] = "LoopGuard.Resuming"
    count: int = 0
    max: int = 0
    message: str = ""


@record
class LoopGuardInactive(LoopGuardRecord):
    """The guard does not watch this model (`loopGuard.models`)."""

    TYPE: ClassVar[str] = "LoopGuard.Inactive"
    model_ref: str = ""
    models: list[str] = field(default_factory=list)
