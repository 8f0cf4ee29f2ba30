"""Subagents: the `task` tool runs a self-contained job in a fresh conversation.

A subagent shares the session's provider, model, workspace, limits and log, and
inherits the loop guard (same settings, same judge, and the session's delegation
chain, so A → B → A hand-offs are seen). Its events carry its name in `agent`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from caretz.agent.agent import Agent
from caretz.agent.parts import Conversation, QuietListener
from caretz.agent.signals import interruption
from caretz.agent.turn import TurnResult
from caretz.messages import ToolSpec
from caretz.text import one_line
from caretz.tools.base import ToolArgumentError, ToolContext, ToolResult

# A hard floor under the guard's own depth check, which only runs while the guard is on.
MAX_DEPTH = 5

SUBAGENT_INSTRUCTIONS = (
    "You are a subagent named {name!r}, started by another agent for one self-contained job. "
    "Do the job, then answer with a short report of what you found or changed: it is all "
    "the agent that started you will see."
)

TASK_SPEC = ToolSpec(
    name="task",
    description=(
        "Delegate a self-contained job to a subagent that starts with an empty conversation "
        "and the same tools. Give it a short role name (agent) and a complete prompt: it "
        "cannot see this conversation. Its final report comes back as the result. Use it for "
        "broad searches or independent pieces of work, not for single commands."
    ),
    parameters={
        "type": "object",
        "properties": {
            "agent": {"type": "string", "description": "A short role name, e.g. 'tester'."},
            "prompt": {"type": "string", "description": "The whole job, with all context."},
        },
        "required": ["agent", "prompt"],
        "additionalProperties": False,
    },
)


class TaskTool:
    effect = "internal"  # for the permission check (tools/base.py)
    spec = TASK_SPEC

    def __init__(self, parent: Agent):
        self.parent = parent

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        name = one_line(str(args["agent"]))
        if not name:
            raise ToolArgumentError("agent must name the subagent, e.g. 'tester'")
        if self.parent.config.depth + 1 > MAX_DEPTH:
            return ToolResult(
                ok=False, output=f"Not run: subagents may nest at most {MAX_DEPTH} deep."
            )
        result = self.spawn(name).run_turn(str(args["prompt"]))
        if result.status == "interrupted":
            raise interruption(result.exit_code)
        return ToolResult(ok=result.exit_code == 0, output=report(name, result))

    def spawn(self, name: str) -> Agent:
        """A fresh conversation on the parent's model, tools and (inherited) guard;
        the run's totals are shared, so limits count the subagent's use too."""
        parent = self.parent
        config = replace(
            parent.config,
            system=parent.config.system + "\n" + SUBAGENT_INSTRUCTIONS.format(name=name) + "\n",
            name=name,
            depth=parent.config.depth + 1,
        )
        parts = replace(
            parent.parts,
            tools=parent.parts.tools.fresh(),
            guard=parent.parts.guard.for_subagent(),
            listener=QuietListener(),
        )
        child = Agent(config, parts, Conversation(totals=parent.conversation.totals))
        child.parts.tools.add(TaskTool(child))
        return child


def report(name: str, result: TurnResult) -> str:
    if result.exit_code == 0:
        return result.text or f"(subagent {name!r} finished without a report)"
    reason = result.message or result.status
    return f"Subagent {name!r} did not finish ({reason}).\n{result.text}".rstrip()
