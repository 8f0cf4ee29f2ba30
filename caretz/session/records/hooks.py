"""The user's hooks' records: each run, and what caretz skipped or was stopped by."""

from __future__ import annotations

from typing import Any, ClassVar

from caretz.session.records.base import HookRecord, optional, record


@record
class HookRan(HookRecord):
    TYPE: ClassVar[str] = "Hook.Ran"
    event: str = ""  # the hook event: "PreToolUse", "Stop", ...
    background: bool | None = None  # True for an `async` hook
    command: str = ""
    source: str = ""
    matcher: str | None = None
    about: str | None = None
    exit_code: int | None = None
    duration_s: float = 0.0
    timed_out: bool = False
    decision: str | None = None
    reason: str | None = None
    warning: str | None = None
    message: str | None = None
    stdout: str = ""
    stderr: str = ""


@record
class HookPromptBlocked(HookRecord):
    TYPE: ClassVar[str] = "Hook.PromptBlocked"
    prompt: str = ""
    reason: str = ""


@record
class HookStopLimit(HookRecord):
    """A Stop or SubagentStop hook would carry the work on past its limit."""

    TYPE: ClassVar[str] = "Hook.StopLimit"
    event: str = ""
    continuations: int = 0
    reason: str = ""


@record
class HookNotApproved(HookRecord):
    TYPE: ClassVar[str] = "Hook.NotApproved"
    source: str = ""
    text: str = ""


@record
class HookSkipped(HookRecord):
    """Hooks in a file caretz does not run: `events` it has none of, or `types` other
    than command hooks (as [event, type] pairs)."""

    TYPE: ClassVar[str] = "Hook.Skipped"
    source: str = ""
    events: list[str] | None = optional()
    types: list[Any] | None = optional()
    text: str = ""


@record
class HookUnsandboxed(HookRecord):
    """A hook of the user's own that runs outside the sandbox (`"sandbox": "off"`), said
    when the session starts."""

    TYPE: ClassVar[str] = "Hook.Unsandboxed"
    source: str = ""
    event: str = ""
    command: str = ""
    text: str = ""
