"""Session events → ACP `session/update`s, for a live turn and for a replayed session.

The translator keeps what a later event needs from an earlier one (each call's name and
arguments until its result), so it is one per ACP session.
"""

from __future__ import annotations

from pathlib import Path

from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    PlanEntry,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)

from caretz.acp import events, notices, toolcalls
from caretz.acp.events import CallStarted, Event, PermissionDecision
from caretz.plan import PLAN_TOOL, read_plan

Update = (
    AgentMessageChunk
    | AgentThoughtChunk
    | UserMessageChunk
    | ToolCallStart
    | ToolCallProgress
    | AgentPlanUpdate
)
_PLAN_STATUS = {"pending": "pending", "in_progress": "in_progress", "done": "completed"}


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
    """What the editor is told about each event of the session's log."""

    def __init__(self, workspace: Path):
        self.workspace = workspace
        self.calls: dict[str, CallStarted] = {}

    def updates(self, event: Event) -> list[Update]:
        kind = events.kind(event)
        if kind == "Tool.Called":
            return self.call_started(events.tool_called(event))
        if kind == "Tool.Result":
            return self.call_finished(event)
        if kind == "Permission.Decided":
            return self.permission_decided(events.permission_decided(event))
        if kind.startswith("LoopGuard."):
            text = notices.guard_notice(events.loop_guard(event))
            return [agent_text(text)] if text else []
        if kind == "Hook.PromptBlocked":
            reason = events.prompt_blocked(event)
            line = f"a UserPromptSubmit hook blocked the prompt; it was not sent: {reason}"
            return [agent_text(notices.from_caretz([line]))]
        return []

    def call_started(self, call: CallStarted) -> list[Update]:
        self.calls[call.call_id] = call
        return [toolcalls.started(call, self.workspace)]

    def permission_decided(self, decision: PermissionDecision) -> list[Update]:
        """An approved call runs now (the question had shown it as pending)."""
        if not (decision.asked and decision.allowed and decision.call_id in self.calls):
            return []
        return [
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=decision.call_id,
                status="in_progress",
            )
        ]

    def call_finished(self, event: Event) -> list[Update]:
        result = events.tool_result(event)
        call = self.calls.pop(result.call_id, None)
        updates: list[Update] = [toolcalls.finished(call, result, self.workspace)]
        if result.ok and call is not None and call.tool == PLAN_TOOL:
            updates.append(plan_update(call))
        return updates


def plan_update(call: CallStarted) -> AgentPlanUpdate:
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
