"""Session records → ACP `session/update`s, for a live turn and for a replayed session.

The translator keeps what a later record needs from an earlier one (each call's name and
arguments until its result), so it is one per ACP session.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    CurrentModeUpdate,
    PlanEntry,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
    UserMessageChunk,
)

from caretz.acp import notices, toolcalls
from caretz.lazy import lazy_module
from caretz.messages import ToolCall
from caretz.plan import PLAN_TOOL, read_plan
from caretz.session.records.base import HookRecord, LoopGuardRecord, LoopRecord, Record
from caretz.session.records.loop import ToolCalled, ToolReturned
from caretz.session.records.permissions import PermissionDecided
from caretz.session.records.session import SessionChanged

if TYPE_CHECKING:
    from caretz.session.records import hooks as hook_records
else:
    # Read on a hook's first record: a session without hooks never loads their records.
    hook_records = lazy_module("caretz.session.records.hooks")

Update = (
    AgentMessageChunk
    | AgentThoughtChunk
    | UserMessageChunk
    | ToolCallStart
    | ToolCallProgress
    | AgentPlanUpdate
    | UsageUpdate
    | CurrentModeUpdate
)
_PLAN_STATUS: dict[str, Literal["pending", "in_progress", "completed"]] = {
    "pending": "pending",
    "in_progress": "in_progress",
    "done": "completed",
}


def agent_text(text: str) -> AgentMessageChunk:
    return AgentMessageChunk(
        session_update="agent_message_chunk", content=TextContentBlock(type="text", text=text)
    )


def agent_thought(text: str) -> AgentThoughtChunk:
    return AgentThoughtChunk(
        session_update="agent_thought_chunk", content=TextContentBlock(type="text", text=text)
    )


def user_text(text: str) -> UserMessageChunk:
    return UserMessageChunk(
        session_update="user_message_chunk", content=TextContentBlock(type="text", text=text)
    )


class EventTranslator:
    """What the editor is told about each record of the session's log."""

    def __init__(self, workspace: Path):
        self.workspace = workspace
        self.calls: dict[str, ToolCall] = {}

    def updates(self, event: Record) -> list[Update]:
        if isinstance(event, ToolCalled):
            return self.call_started(toolcalls.logged_call(event))
        if isinstance(event, ToolReturned):
            return self.call_finished(event)
        if isinstance(event, PermissionDecided):
            return self.permission_decided(event)
        if isinstance(event, LoopGuardRecord):
            text = notices.guard_notice(event)
            return [agent_text(text)] if text else []
        if isinstance(event, HookRecord):
            return hook_notice(event)
        if isinstance(event, SessionChanged) and event.change == "permission_mode":
            # The editor's switch, or an approved plan's: the editor's mode picker follows.
            mode = event.permission_mode
            return [CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode)]
        return []

    def call_started(self, call: ToolCall) -> list[Update]:
        self.calls[call.id] = call
        return [toolcalls.started(call, self.workspace)]

    def permission_decided(self, decision: PermissionDecided) -> list[Update]:
        """An approved call runs now (the question had shown it as pending)."""
        allowed = decision.answer in ("yes", "always")
        if not (decision.asked and allowed and decision.call_id in self.calls):
            return []
        return [
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=decision.call_id,
                status="in_progress",
            )
        ]

    def call_finished(self, result: ToolReturned) -> list[Update]:
        call = self.calls.pop(result.call_id, None)
        updates: list[Update] = [toolcalls.finished(call, result, self.workspace)]
        if result.ok and call is not None and call.name == PLAN_TOOL:
            updates.append(plan_update(call))
        return updates


def hook_notice(event: HookRecord) -> list[Update]:
    """A prompt a UserPromptSubmit hook blocked, said once; no other hook record is shown."""
    reason = blocked_prompt(event)
    if reason is None:
        return []
    line = f"a UserPromptSubmit hook blocked the prompt; it was not sent: {reason}"
    return [agent_text(notices.from_caretz([line]))]


def blocked_prompt(event: HookRecord) -> str | None:
    """The reason a UserPromptSubmit hook gave for blocking the prompt; None for any other
    hook record."""
    return (event.reason or "") if isinstance(event, hook_records.HookPromptBlocked) else None


def by_main_agent(event: LoopRecord) -> bool:
    """Whether the main agent's turn wrote `event` (not a subagent's)."""
    return (event.agent or "main") == "main"


def plan_update(call: ToolCall) -> AgentPlanUpdate:
    """The plan a `todo` call sent, whole (ACP replaces the client's plan with each one)."""
    try:
        items = read_plan(call.arguments)
    except ValueError:
        items = ()
    entries = [
        PlanEntry(content=item.text, priority="medium", status=_PLAN_STATUS[item.status])
        for item in items
    ]
    return AgentPlanUpdate(session_update="plan", entries=entries)
