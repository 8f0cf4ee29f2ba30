"""The `hooks` section, in Claude Code's shape:

    {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "…",
                                                   "timeout": 60}]}]}

An event name caretz does not know, a matcher that is no regular expression, a hook
without a command or with a timeout of zero: each is an error naming the key.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal, get_args

from pydantic import BaseModel, Field, field_validator

from caretz.config_base import Section

DEFAULT_TIMEOUT_S = 60.0
HookEvent = Literal[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "PreCompact",
    "LoopGuardJudged",
    "LoopGuardStopped",
]
HOOK_EVENTS: tuple[HookEvent, ...] = get_args(HookEvent)
Timeout = Annotated[int | float, Field(gt=0)]


class HookCommand(Section):
    """One command: it reads the event as JSON on stdin."""

    type: Literal["command"] = "command"
    command: str = Field(min_length=1)
    timeout: Timeout = DEFAULT_TIMEOUT_S  # seconds, as in Claude Code

    @field_validator("command")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the command is empty")
        return value


class HookMatcher(Section):
    """Commands for the calls (or other occasions) the matcher names; "" or "*": all."""

    matcher: str = ""
    hooks: list[HookCommand]

    @field_validator("matcher")
    @classmethod
    def _a_regex(cls, value: str) -> str:
        if value.strip() in ("", "*"):
            return value
        try:
            re.compile(value)
        except re.error as error:
            raise ValueError(f"{value!r} is not a regular expression ({error})") from None
        return value


def _event(name: str) -> list[HookMatcher]:
    return Field(default_factory=list, alias=name)  # type: ignore[return-value]


class HooksConfig(Section):
    """The hooks of one file, by event."""

    session_start: list[HookMatcher] = _event("SessionStart")
    user_prompt_submit: list[HookMatcher] = _event("UserPromptSubmit")
    pre_tool_use: list[HookMatcher] = _event("PreToolUse")
    post_tool_use: list[HookMatcher] = _event("PostToolUse")
    stop: list[HookMatcher] = _event("Stop")
    pre_compact: list[HookMatcher] = _event("PreCompact")
    loop_guard_judged: list[HookMatcher] = _event("LoopGuardJudged")
    loop_guard_stopped: list[HookMatcher] = _event("LoopGuardStopped")

    def for_event(self, event: HookEvent) -> list[HookMatcher]:
        for name, field in type(self).model_fields.items():
            if field.alias == event:
                return list(getattr(self, name))
        raise KeyError(event)

    def __bool__(self) -> bool:
        return any(self.for_event(event) for event in HOOK_EVENTS)


class ProjectHooks(BaseModel):
    """Where hooks sit in a project's `.caretz/settings.json` (its other keys are the
    permission rules'), so that an error names `hooks.PreToolUse[0]…`."""

    hooks: HooksConfig
