"""The plan tool: the agent keeps a short task list by sending the whole list each time.

The list lives in the conversation (each `todo` call carries it whole), so it
survives resume and needs no state here; `latest_plan` reads the current one back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from caretz.messages import Message, ToolSpec
from caretz.plan import PLAN_TOOL, Plan, plan_lines, plan_progress, read_plan
from caretz.tools.base import ToolArgumentError, ToolContext, ToolResult

TODO_SPEC = ToolSpec(
    name=PLAN_TOOL,
    description=(
        "Keep a short plan for work of several steps: send the whole list each time, "
        "with each item's status (pending, in_progress or done). Mark an item in_progress "
        "before you start it and done as soon as it is finished; keep one item in_progress "
        "at a time. Skip it for a task of one or two steps. The user and the reviewers of "
        "your work see the plan and compare it with what you do."
    ),
    parameters={
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "description": "The whole plan, in order.",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "description": "One step, imperative."},
                        "status": {
                            "type": "string",
                            "enum": ["pending", "in_progress", "done"],
                        },
                    },
                    "required": ["content", "status"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["todos"],
        "additionalProperties": False,
    },
)


class TodoTool:
    spec = TODO_SPEC
    effect = "internal"  # it only records the plan (tools/base.py)

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            plan = read_plan(args)
        except ValueError as error:
            raise ToolArgumentError(str(error)) from None
        lines = plan_lines(plan) or ["(no items)"]
        return ToolResult(
            ok=True, output=f"Plan updated ({plan_progress(plan)}):\n" + "\n".join(lines)
        )


def latest_plan(messages: Sequence[Message]) -> Plan:
    """The plan of the newest `todo` call in `messages` that did not fail; () when none."""
    failed = {m.tool_call_id for m in messages if m.role == "tool" and m.is_error}
    for message in reversed(messages):
        for call in reversed(message.tool_calls):
            if call.name != PLAN_TOOL or call.id in failed:
                continue
            try:
                return read_plan(call.arguments)
            except ValueError:
                continue
    return ()
