"""The detector seam: each cheap check sees the turn's plain events and may fire.

Every hook returns a Firing or None; the guard decides what a firing leads to
(ask the judge, warn the model, block a call, or act at once).
"""

from __future__ import annotations

from typing import Literal

from caretz.guard.model import Firing, ToolObservation, TurnContext, Verdict
from caretz.messages import Message, ToolCall
from caretz.text import one_line

Severity = Literal["judge", "warn", "block", "stop"]
HEADLINE_CHARS = 120


class Detector:
    name: str = ""

    def begin_turn(self, ctx: TurnContext) -> None:
        """A new turn starts (user message, or an automated resume)."""

    def before_tool(self, call: ToolCall, index: int) -> Firing | None:
        """A call is about to run; a `block` firing refuses it."""
        return None

    def after_tool(self, obs: ToolObservation) -> Firing | None:
        return None

    def on_text(self, text: str) -> Firing | None:
        """A delta of the streamed answer text."""
        return None

    def on_thinking(self, text: str, now: float) -> Firing | None:
        """A delta of streamed reasoning; `now` is the injected clock's reading."""
        return None

    def after_response(self, message: Message) -> Firing | None:
        """One model response is complete (text, tool calls, thinking)."""
        return None

    def end_turn(self, final_text: str, progress: bool) -> Firing | None:
        """The turn ended with `final_text`; `progress`: some tool call succeeded."""
        return None

    def after_verdict(self, firing: Firing, verdict: Verdict) -> None:
        """The judge answered about `firing` (called for every detector, not only the
        one that fired): restart the counts of what the verdict was about."""

    def hold(self, firing: Firing) -> None:
        """A judge really answered "not stuck" about `firing` (not a timeout or an
        error); called for every detector, after `after_verdict`.

        The guard itself holds the firing's pattern until it has doubled or a cap
        of calls has passed (`guard/holds.py`), for every check alike; a check
        overrides this only to space its own counting further in its own terms."""


def fire(
    detector: str,
    fingerprint: str,
    what: str,
    severity: Severity = "judge",
    step: int | None = None,
    message: str = "",
    failure: str = "",
    count: int = 0,
    pattern: str = "",
    immediate: bool = False,
    size: int = 0,
    hold_until: int = 0,
) -> Firing:
    """A peer detector's firing; its headline is "<detector>: <what>" on one short line."""
    return Firing(
        detector=detector,
        fingerprint=fingerprint,
        headline=one_line(f"{detector}: {what}", HEADLINE_CHARS),
        severity=severity,
        step=step,
        message=message,
        failure=failure,
        count=count,
        pattern=pattern,
        immediate=immediate,
        size=size,
        hold_until=hold_until,
    )
