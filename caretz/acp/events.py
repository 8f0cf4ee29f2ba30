"""Reading the session's events: the one place `caretz acp` looks inside them.

Events reach a view as dicts today (`{"type": "Tool.Result", "ts": ..., ...}`); each
function below reads one event type into the plain record the translation needs, so a
change in how events are carried touches this module only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

Event = Mapping[str, Any]
MAIN_AGENT = "main"


@dataclass(frozen=True)
class CallStarted:
    """Tool.Called: the model asked for a call."""

    call_id: str
    tool: str
    arguments: Mapping[str, Any]
    agent: str


@dataclass(frozen=True)
class CallFinished:
    """Tool.Result: what a call returned."""

    call_id: str
    tool: str
    ok: bool
    output: str
    diff: str | None
    exit_code: int | None
    ended_by: str | None


@dataclass(frozen=True)
class TurnOpened:
    """Turn.Started: a turn of the main agent or a subagent."""

    prompt: str
    from_user: bool
    agent: str


@dataclass(frozen=True)
class Reply:
    """Model.Response: one reply of the model, as stored."""

    text: str
    thinking: str
    stop_reason: str
    agent: str


def kind(event: Event) -> str:
    return str(event.get("type", ""))


def agent_of(event: Event) -> str:
    return str(event.get("agent") or MAIN_AGENT)


def tool_called(event: Event) -> CallStarted:
    call = event.get("call") or {}
    arguments = call.get("arguments")
    return CallStarted(
        call_id=str(call.get("id", "")),
        tool=str(call.get("name", "")),
        arguments=arguments if isinstance(arguments, Mapping) else {},
        agent=agent_of(event),
    )


def tool_result(event: Event) -> CallFinished:
    return CallFinished(
        call_id=str(event.get("call_id", "")),
        tool=str(event.get("name", "")),
        ok=bool(event.get("ok")),
        output=str(event.get("output") or ""),
        diff=event.get("diff") or None,
        exit_code=event.get("exit_code"),
        ended_by=event.get("ended_by"),
    )


def permission_asked(event: Event) -> str:
    """Permission.Asked: the call the user is about to be asked about."""
    return str(event.get("call_id", ""))


@dataclass(frozen=True)
class PermissionDecision:
    """Permission.Decided: the answer to a call that asked (or a refusal without asking)."""

    call_id: str
    asked: bool
    allowed: bool


def permission_decided(event: Event) -> PermissionDecision:
    return PermissionDecision(
        call_id=str(event.get("call_id", "")),
        asked=bool(event.get("asked")),
        allowed=event.get("answer") in ("yes", "always"),
    )


def turn_started(event: Event) -> TurnOpened:
    return TurnOpened(
        prompt=str(event.get("prompt") or ""),
        from_user=bool(event.get("from_user", True)),
        agent=agent_of(event),
    )


def model_response(event: Event) -> Reply:
    message = event.get("message") or {}
    return Reply(
        text=str(message.get("content") or ""),
        thinking=str(message.get("thinking") or ""),
        stop_reason=str(event.get("stop_reason") or ""),
        agent=agent_of(event),
    )


def output_limit_ended(event: Event) -> bool:
    """Model.OutputLimit: True when the reply stayed cut off and the turn ends there."""
    return event.get("action") == "ended"


@dataclass(frozen=True)
class GuardEvent:
    """A LoopGuard.* event: what the loop guard saw, judged or did."""

    kind: str  # the part after "LoopGuard.": Judged, Redirected, Stopped, ...
    headline: str  # "repeat: 3× Bash: ...", with the detector in front
    mode: str  # shadow or active
    action: str  # judged: continue, redirect, stop
    applied: bool  # False: shadow mode, nothing changed
    judged: bool  # redirected or stopped on a verdict (the Judged notice said so)
    stuck: bool | None  # judged: the verdict
    confidence: float
    reason: str
    try_instead: str
    error: str  # judged: why there was no verdict
    unsure: bool  # judged: stuck, below the confidence threshold
    notice: str  # stopped: what the user is told
    message: str  # warned: the warning
    count: int  # resuming: this resume's number ...
    maximum: int  # ... of how many


def loop_guard(event: Event) -> GuardEvent:
    verdict = event.get("verdict") or {}
    headline = str(event.get("headline") or "")
    detector = str(event.get("detector") or "")
    if detector and not headline.startswith(f"{detector}:"):
        headline = f"{detector}: {headline}" if headline else detector
    return GuardEvent(
        kind=kind(event).removeprefix("LoopGuard."),
        headline=headline,
        mode=str(event.get("mode") or "active"),
        action=str(event.get("action") or ""),
        applied=bool(event.get("applied", True)),
        judged=bool(event.get("judged")),
        stuck=verdict.get("stuck") if verdict else None,
        confidence=float(verdict.get("confidence") or 0.0),
        reason=str(verdict.get("reason") or ""),
        try_instead=str(verdict.get("try_instead") or ""),
        error=str(event.get("error") or ""),
        unsure=bool(event.get("unsure")),
        notice=str(event.get("notice") or ""),
        message=str(event.get("message") or ""),
        count=int(event.get("count") or 0),
        maximum=int(event.get("max") or 0),
    )


def prompt_blocked(event: Event) -> str:
    """Hook.PromptBlocked: the hook's reason."""
    return str(event.get("reason") or "")
