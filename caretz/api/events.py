"""What `Session.stream()` yields: small frozen records, one per kind of thing that happens.

The session's own events reach the API as its log's records (`caretz/session/records/`);
this module is the only place that reads them, one function per kind, so the API's
records stay the same whatever the session's records become.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from caretz.api.result import GuardVerdict
from caretz.lazy import lazy_module
from caretz.session.records import loop
from caretz.session.records.base import LoopGuardRecord, Record
from caretz.session.records.permissions import PermissionDecided

if TYPE_CHECKING:
    from caretz.session.records import guard as guard_records
else:
    # The guard's records: loaded already when one of them is the event read.
    guard_records = lazy_module("caretz.session.records.guard")

if TYPE_CHECKING:
    from caretz.api.result import RunResult
    from caretz.providers.base import Retrying as ProviderRetrying


@dataclass(frozen=True)
class TextDelta:
    """A piece of the agent's answer, as it streams."""

    text: str


@dataclass(frozen=True)
class ThinkingDelta:
    """A piece of the model's reasoning, where the model shows it."""

    text: str


@dataclass(frozen=True)
class ToolCall:
    """The agent calls a tool (`agent`: "main", or the subagent's name)."""

    id: str
    name: str
    arguments: Mapping[str, Any]
    agent: str = "main"


@dataclass(frozen=True, kw_only=True)
class ToolCallResult:
    """A tool call's result, as the model reads it."""

    call_id: str
    name: str
    ok: bool
    output: str
    exit_code: int | None = None
    duration_s: float = 0.0
    ended_by: str | None = (
        None  # "timeout", "interrupted", …: how a command that did not finish ended
    )
    agent: str = "main"


@dataclass(frozen=True, kw_only=True)
class GuardNotice:
    """The loop guard fired, asked its judge, redirected, warned, blocked, stopped or cut
    a turn (`kind`, from the event type: "fired", "judged", "redirected", "stopped",
    "warned", "blocked", "cut", "resuming", …). `text` is what it says: the note sent to
    the model, the stop's notice, the warning or the reason; `data` the whole event."""

    kind: str
    detector: str | None
    headline: str | None
    text: str
    mode: str | None
    data: Mapping[str, Any] = field(repr=False, default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class PermissionDecision:
    """A call that needed approval was allowed or refused: by `on_permission`, or without
    a question, by a rule or the mode."""

    call_id: str
    tool: str
    input: str  # what the call is about, on one line
    allowed: bool
    reason: str
    by: str | None  # what decided that it needs approval: "rule", "mode", "hook", …
    asked: bool = False  # True: `on_permission` answered it


@dataclass(frozen=True)
class Retrying:
    """A request failed and is sent again after `delay_s`; `discarded`: a reply that broke
    off mid-stream, whose streamed text the retry replaces."""

    attempt: int
    delay_s: float
    reason: str
    discarded: bool = False


@dataclass(frozen=True)
class SessionEvent:
    """Any other event of the session's log (`type` as events.jsonl names it: Turn.Started,
    Model.Response, Checkpoint.Created, …), its fields as they are stored."""

    type: str
    data: Mapping[str, Any] = field(repr=False)


@dataclass(frozen=True)
class Finished:
    """The run ended: always the last event of `stream()`."""

    result: RunResult


Event = (
    TextDelta
    | ThinkingDelta
    | ToolCall
    | ToolCallResult
    | GuardNotice
    | PermissionDecision
    | Retrying
    | SessionEvent
    | Finished
)

# The guard's record fields that carry what it says, by record type.
_GUARD_TEXT = ("note", "notice", "message", "reason")


def from_session_event(event: Record) -> Event:
    """The API's record for one of the session's records."""
    if isinstance(event, loop.ToolCalled):
        return _tool_call(event)
    if isinstance(event, loop.ToolReturned):
        return _tool_result(event)
    if isinstance(event, PermissionDecided):
        return _permission(event)
    if isinstance(event, LoopGuardRecord):
        return _guard_notice(event)
    return SessionEvent(event.type, event.to_dict())


def guard_verdict(event: Record) -> GuardVerdict | None:
    """The judge's verdict a `LoopGuard.Judged` record holds (None for any other record)."""
    if not isinstance(event, LoopGuardRecord):
        return None
    if not isinstance(event, guard_records.LoopGuardJudged):
        return None
    verdict = event.verdict or {}
    return GuardVerdict(
        trigger=event.trigger or "",
        headline=event.headline or "",
        stuck=bool(verdict.get("stuck")),
        confidence=float(verdict.get("confidence") or 0.0),
        reason=verdict.get("reason") or "",
        try_instead=verdict.get("try_instead") or "",
        action=event.action or "continue",
        applied=bool(event.applied),
        model=event.model,
        error=event.error,
    )


def retrying(event: ProviderRetrying) -> Retrying:
    """The API's record of a provider's retry (a view's `on_retry`)."""
    return Retrying(event.attempt, event.delay_s, event.reason, event.discarded is not None)


def _tool_call(event: loop.ToolCalled) -> ToolCall:
    call = event.call
    return ToolCall(
        id=call["id"],
        name=call["name"],
        arguments=call.get("arguments") or {},
        agent=event.agent or "main",
    )


def _tool_result(event: loop.ToolReturned) -> ToolCallResult:
    return ToolCallResult(
        call_id=event.call_id,
        name=event.name,
        ok=event.ok,
        output=event.output or "",
        exit_code=event.exit_code,
        duration_s=event.duration_s or 0.0,
        ended_by=event.ended_by,
        agent=event.agent or "main",
    )


def _permission(event: PermissionDecided) -> PermissionDecision:
    return PermissionDecision(
        call_id=event.call_id or "",
        tool=event.tool or "",
        input=event.input or "",
        allowed=event.answer in ("yes", "always"),
        reason=event.reason or "",
        by=event.by,
        asked=bool(event.asked),
    )


def _guard_notice(event: LoopGuardRecord) -> GuardNotice:
    # The guard's records differ in their fields: each says what it says in one of these.
    said = next((getattr(event, name) for name in _GUARD_TEXT if getattr(event, name, None)), "")
    return GuardNotice(
        kind=event.type.partition(".")[2].lower(),
        detector=getattr(event, "detector", None) or getattr(event, "trigger", None),
        headline=getattr(event, "headline", None),
        text=str(said),
        mode=getattr(event, "mode", None),
        data=event.to_dict(),
    )
