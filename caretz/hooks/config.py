"""The `hooks` section, in Claude Code's shape:

    {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "…",
                                                   "timeout": 60}]}]}

Claude Code's event names that caretz does not run are accepted and skipped (the session
says so when it starts), so a team's settings load unchanged. Any other event name, a
matcher that is no regular expression, a command hook without a command or with a
timeout of zero, `"sandbox": "off"` on a project's hook: each is an error naming the
key. A hook of another type (http, prompt, agent) is refused where its answer could
decide something, and skipped elsewhere.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    BaseModel,
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from caretz.config_section import Section

DEFAULT_TIMEOUT_S = 60.0
HookEvent = Literal[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "Notification",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "SessionEnd",
    "LoopGuardJudged",
    "LoopGuardStopped",
]
HOOK_EVENTS: tuple[HookEvent, ...] = get_args(HookEvent)
# Events whose hooks can block or decide: a hook there that caretz cannot run is refused.
DECIDING_EVENTS: tuple[HookEvent, ...] = (
    "PreToolUse",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "PostToolUse",
    "PostToolUseFailure",
    "PreCompact",
)
# Claude Code's hook events; those caretz does not run are skipped.
CLAUDE_CODE_EVENTS = (
    "SessionStart", "Setup", "UserPromptSubmit", "UserPromptExpansion", "PreToolUse",
    "PermissionRequest", "PermissionDenied", "PostToolUse", "PostToolUseFailure",
    "PostToolBatch", "Notification", "SubagentStart", "SubagentStop", "TaskCreated",
    "TaskCompleted", "Stop", "StopFailure", "TeammateIdle", "PreCompact", "PostCompact",
    "SessionEnd", "Elicitation", "ElicitationResult", "WorktreeCreate", "WorktreeRemove",
    "ConfigChange", "InstructionsLoaded", "CwdChanged", "FileChanged",
)  # fmt: skip
SKIPPED_EVENTS = tuple(name for name in CLAUDE_CODE_EVENTS if name not in HOOK_EVENTS)
Timeout = Annotated[int | float, Field(gt=0)]
# The validation context under which a project's hooks are read: none may leave the sandbox.
PROJECT_CONTEXT = "project"
PROJECT_SANDBOX_OFF = (
    "a project's hooks always run in the sandbox; only your own profile may set "
    '"sandbox": "off" on a hook'
)
HookType = Literal["command", "http", "prompt", "agent", "mcp_tool"]


class HookCommand(Section):
    """One hook. A command reads the event as JSON on stdin; other types are kept only
    to be skipped or refused, so their own keys are not checked."""

    type: HookType = "command"
    command: str | None = Field(default=None, min_length=1)
    timeout: Timeout = DEFAULT_TIMEOUT_S  # seconds, as in Claude Code
    run_async: bool = Field(default=False, alias="async")  # run without waiting for it
    status_message: str | None = None  # Claude Code's spinner text; caretz shows none
    # "off": the user's own choice, in their profile, to run this hook outside the
    # session's sandbox; a project's hook never may (refused when the project is read).
    sandbox: Literal["on", "off"] = "on"

    @model_validator(mode="before")
    @classmethod
    def _only_a_command_is_read(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("type", "command") != "command":
            return {key: data[key] for key in ("type", "timeout") if key in data}
        return data

    @field_validator("command")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("the command is empty")
        return value

    @field_validator("sandbox")
    @classmethod
    def _only_the_user_leaves_the_sandbox(cls, value: str, info: ValidationInfo) -> str:
        if value == "off" and (info.context or {}).get(PROJECT_CONTEXT):
            raise ValueError(PROJECT_SANDBOX_OFF)
        return value

    @model_validator(mode="after")
    def _a_command_has_one(self) -> HookCommand:
        if self.type == "command" and self.command is None:
            raise ValueError("a command hook needs a `command`")
        return self


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


def _field_name(event: HookEvent) -> str:
    """The HooksConfig field an event's alias names (`PreToolUse` → `pre_tool_use`)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def _event(name: str) -> list[HookMatcher]:
    return Field(default_factory=list, alias=name)


class HooksConfig(Section):
    """The hooks of one file, by event."""

    session_start: list[HookMatcher] = _event("SessionStart")
    user_prompt_submit: list[HookMatcher] = _event("UserPromptSubmit")
    pre_tool_use: list[HookMatcher] = _event("PreToolUse")
    post_tool_use: list[HookMatcher] = _event("PostToolUse")
    post_tool_use_failure: list[HookMatcher] = _event("PostToolUseFailure")
    notification: list[HookMatcher] = _event("Notification")
    stop: list[HookMatcher] = _event("Stop")
    subagent_stop: list[HookMatcher] = _event("SubagentStop")
    pre_compact: list[HookMatcher] = _event("PreCompact")
    session_end: list[HookMatcher] = _event("SessionEnd")
    loop_guard_judged: list[HookMatcher] = _event("LoopGuardJudged")
    loop_guard_stopped: list[HookMatcher] = _event("LoopGuardStopped")
    # Claude Code events written in the file that caretz does not run.
    _skipped: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _set_aside_claude_code_events(cls, data: Any, handler: Any) -> HooksConfig:
        skipped: tuple[str, ...] = ()
        if isinstance(data, dict):
            skipped = tuple(key for key in data if key in SKIPPED_EVENTS)
            data = {key: value for key, value in data.items() if key not in skipped}
        config: HooksConfig = handler(data)
        config._skipped = skipped
        return config

    @field_validator(*(_field_name(event) for event in DECIDING_EVENTS))
    @classmethod
    def _only_commands_decide(cls, groups: list[HookMatcher], info: ValidationInfo) -> Any:
        event = cls.model_fields[str(info.field_name)].alias
        for at, group in enumerate(groups):
            for index, hook in enumerate(group.hooks):
                if hook.type != "command":
                    raise ValueError(
                        f"[{at}].hooks[{index}].type: caretz runs only command hooks, and a hook "
                        f"of type {hook.type!r} on {event} could decide what happens, so it "
                        "is refused"
                    )
        return groups

    def for_event(self, event: HookEvent) -> list[HookMatcher]:
        return list(getattr(self, _field_name(event)))

    @property
    def skipped_events(self) -> tuple[str, ...]:
        """Claude Code's events this file has hooks for that caretz does not run."""
        return self._skipped

    def skipped_types(self) -> list[tuple[HookEvent, str]]:
        """(event, type) of the hooks of other types than command, which are skipped."""
        return [
            (event, hook.type)
            for event in HOOK_EVENTS
            for group in self.for_event(event)
            for hook in group.hooks
            if hook.type != "command"
        ]

    def __bool__(self) -> bool:
        return bool(self._skipped) or any(self.for_event(event) for event in HOOK_EVENTS)


class ProjectHooks(BaseModel):
    """Where hooks sit in a project's `.caretz/settings.json` (its other keys are the
    permission rules'), so that an error names `hooks.PreToolUse[0]…`."""

    hooks: HooksConfig
