"""Subagents: the `task` tool runs a self-contained job in a fresh conversation.

A subagent shares the session's provider, model, workspace, limits and log, and
inherits the loop guard (same settings, same judge, and the session's delegation
chain, so A → B → A hand-offs are seen). Its events carry its name in `agent`.
`subagent_type` names an agent a file defines (agent/named.py): its instructions, and the
limits it narrows the session's tools and mode to; a read-only one runs beside the other
read-only calls of the same reply (`reads_only`, tools/parallel.py).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from caretz.agent.agent import Agent
from caretz.agent.named import (
    AgentUnusable,
    Isolation,
    NamedAgents,
    Narrowing,
    catalog_text,
    narrowed_tools,
    narrowing,
    reads_only,
)
from caretz.agent.outcomes import Outcome
from caretz.agent.parts import AgentConfig, AgentParts, Conversation, QuietListener
from caretz.agent.signals import interruption
from caretz.agent_files.definition import AgentDefinition
from caretz.config_base import ConfigError
from caretz.messages import ToolSpec
from caretz.text import one_line
from caretz.tools.base import ToolArgumentError, ToolContext, ToolResult
from caretz.tools.narrowing import rules_at

# A hard floor under the guard's own depth check, which only runs while the guard is on.
MAX_DEPTH = 5

SUBAGENT_INSTRUCTIONS = (
    "You are a subagent named {name!r}, started by another agent for one self-contained job. "
    "Do the job, then answer with a short report of what you found or changed: it is all "
    "the agent that started you will see."
)
TASK_DESCRIPTION = (
    "Delegate a self-contained job to a subagent that starts with an empty conversation "
    "and the same tools. Give it a short role name (agent) and a complete prompt: it "
    "cannot see this conversation. Its final report comes back as the result. Use it for "
    "broad searches or independent pieces of work, not for single commands."
)
NAMED_DESCRIPTION = (
    "\n\nNamed agents (subagent_type), each with its own instructions and tools; "
    "read-only ones asked for in one reply run at the same time:\n"
)


def task_spec(named: NamedAgents) -> ToolSpec:
    properties: dict[str, Any] = {
        "agent": {"type": "string", "description": "A short role name, e.g. 'tester'."},
        "prompt": {"type": "string", "description": "The whole job, with all context."},
    }
    description = TASK_DESCRIPTION
    if named.agents:
        properties["subagent_type"] = {
            "type": "string",
            "description": "The named agent to run: " + ", ".join(named.agents),
        }
        properties["description"] = {"type": "string", "description": "3-5 words on the job."}
        description += NAMED_DESCRIPTION + catalog_text(named)
    return ToolSpec(
        name="task",
        description=description,
        parameters={
            "type": "object",
            "properties": properties,
            "required": ["prompt"],
            "additionalProperties": False,
        },
    )


class TaskTool:
    effect = "internal"  # for the permission check (tools/base.py)

    def __init__(self, parent: Agent, named: NamedAgents | None = None):
        self.parent = parent
        self.named = named or NamedAgents()
        self.spec = task_spec(self.named)

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        definition = self._definition(args)
        name = one_line(str(args.get("agent") or "")) or (definition.name if definition else "")
        if not name:
            raise ToolArgumentError("agent must name the subagent, e.g. 'tester'")
        if self.parent.config.depth + 1 > MAX_DEPTH:
            return ToolResult(
                ok=False, output=f"Not run: subagents may nest at most {MAX_DEPTH} deep."
            )
        try:
            child = self.spawn(name, definition)
            isolation = self._isolated(child) if definition and definition.isolation else None
        except (ValueError, ConfigError) as problem:  # AgentUnusable among them
            return ToolResult(ok=False, output=f"Not run: {one_line(str(problem))}")
        try:
            result = child.run_turn(str(args["prompt"]))
        finally:
            where = isolation.finish() if isolation is not None else ""
        if result.status == "interrupted":
            raise interruption(result.exit_code)
        output = report(name, result) + (f"\n{where}" if where else "")
        return ToolResult(ok=result.exit_code == 0, output=output)

    def _isolated(self, child: Agent) -> Isolation:
        """`child` moved into a worktree of its own: its files, commands and the rules'
        `./` paths there, in a sandbox of its own (when the session's commands have one)."""
        if self.named.isolate is None:
            raise AgentUnusable("isolation: worktree: no worktree can be made here")
        ctx = child.parts.tool_ctx
        isolation = self.named.isolate(child.config.name, ctx.sandbox is not None)
        moved = replace(
            ctx,
            workspace=isolation.workspace,
            sandbox=isolation.sandbox,
            rules=rules_at(ctx.rules, isolation.workspace),
            rules_root=isolation.workspace,
        )
        child.parts = replace(child.parts, tool_ctx=moved)
        return isolation

    def reads_only(self, args: dict[str, Any]) -> bool:
        """Whether this call runs a named agent that only reads (the registry's
        `runs_in_parallel`): it may run beside the reply's other read-only calls."""
        try:
            definition = self._definition(args)
            if definition is None or definition.isolation is not None:
                return False
            return reads_only(narrowed_tools(self.parent.parts.tools, self._narrowing(definition)))
        except (ToolArgumentError, AgentUnusable):
            return False

    def _definition(self, args: dict[str, Any]) -> AgentDefinition | None:
        kind = one_line(str(args.get("subagent_type") or ""))
        if not kind:
            return None
        definition = self.named.get(kind)
        if definition is None:
            known = ", ".join(self.named.agents) or "none"
            raise ToolArgumentError(f"no agent named {kind!r} (the named agents: {known})")
        return definition

    def _narrowing(self, definition: AgentDefinition) -> Narrowing:
        inherited = self.parent.parts.tool_ctx.mode_floor
        return narrowing(definition, self.named.project_root, inherited)

    def spawn(self, name: str, definition: AgentDefinition | None = None) -> Agent:
        """A fresh conversation on the parent's model, tools and (inherited) guard;
        the run's totals are shared, so limits count the subagent's use too. A named
        agent's file narrows the tools and mode and may name another model; raises
        AgentUnusable (or a ConfigError) for one that cannot run as written."""
        parent = self.parent
        system = parent.config.system + "\n" + SUBAGENT_INSTRUCTIONS.format(name=name) + "\n"
        config = replace(parent.config, system=system, name=name, depth=parent.config.depth + 1)
        parts = replace(
            parent.parts,
            tools=parent.parts.tools.fresh(),
            guard=parent.parts.guard.for_subagent(),
            listener=QuietListener(),
        )
        if definition is not None:
            config, parts = self._named(definition, config, parts)
        child = Agent(config, parts, Conversation(totals=parent.conversation.totals))
        child.parts.tools.add(TaskTool(child, self.named))
        return child

    def _named(
        self, definition: AgentDefinition, config: AgentConfig, parts: AgentParts
    ) -> tuple[AgentConfig, AgentParts]:
        narrow = self._narrowing(definition)
        if definition.prompt:
            config = replace(config, system=config.system + "\n" + definition.prompt + "\n")
        tools = narrowed_tools(self.parent.parts.tools, narrow)
        ctx = replace(parts.tool_ctx, mode_floor=narrow.mode_floor)
        parts = replace(parts, tools=tools, tool_ctx=ctx)
        if definition.model is not None:
            if self.named.open_model is None:
                raise AgentUnusable(f"{definition.path}: model: no model can be opened here")
            try:
                model = self.named.open_model(definition.model)
            except (ValueError, ConfigError) as error:
                raise AgentUnusable(f"{definition.path}: model: {error}") from None
            config = replace(config, model_id=model.model_id, model_ref=model.model_ref)
            parts = replace(parts, provider=model.provider)
        return config, parts


def report(name: str, result: Outcome) -> str:
    if result.exit_code == 0:
        return result.text or f"(subagent {name!r} finished without a report)"
    reason = result.message or result.status
    return f"Subagent {name!r} did not finish ({reason}).\n{result.text}".rstrip()
