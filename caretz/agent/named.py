"""Named subagents: the agents a session's files define, as the task tool runs them.

An agent file (caretz/agent_files/) gives a subagent its instructions, and may narrow
what it does: `tools` / `disallowedTools` (tools/narrowing.py: the registry it gets holds
only those, and every call is checked against them), a `permissionMode` applied only
where stricter than the session's (`ToolContext.mode_floor`), and a `model`, which must
resolve (`OpenModel`, given by the session's wiring) or the call is refused in one line.
It runs under the session's hooks, rules, mode and sandbox, which it never widens; a
subagent it starts is held to the same limits.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from caretz.agent_files.definition import AgentDefinition
from caretz.providers.base import Provider
from caretz.tools.narrowing import ToolLimit, agent_floor, tool_limit
from caretz.tools.registry import ToolRegistry, withheld_effects

if TYPE_CHECKING:
    from caretz.sandbox.runner import Sandbox

# Tools that change nothing outside the agent's own state (its plan, its own subagents,
# which are held to its limits): a subagent with only these and reading tools is read-only.
OWN_STATE_TOOLS = frozenset({"task", "todo"})


class AgentUnusable(ValueError):
    """A named agent that cannot run as written; str() is one line naming its file."""


@dataclass(frozen=True)
class SubagentModel:
    model_id: str
    model_ref: str
    provider: Provider


# A model as an agent file names it → the model to run on; raises ValueError (ConfigError).
OpenModel = Callable[[str], SubagentModel]


@dataclass(frozen=True)
class Isolation:
    """A worktree of its own for an agent with `isolation: worktree`, and its sandbox."""

    workspace: Path
    sandbox: Sandbox | None
    finish: Callable[[], str]  # its sandbox closed, the worktree removed if unchanged: a line


# (the agent's name, whether the session's commands are sandboxed) → its worktree; raises
# ValueError or ConfigError (a folder in no git repository, a sandbox that cannot open).
Isolate = Callable[[str, bool], Isolation]


@dataclass(frozen=True)
class NamedAgents:
    agents: Mapping[str, AgentDefinition] = field(default_factory=dict)
    open_model: OpenModel | None = None
    project_root: Path = Path(".")
    isolate: Isolate | None = None

    def get(self, name: str) -> AgentDefinition | None:
        return self.agents.get(name.strip().lower())


@dataclass(frozen=True)
class Narrowing:
    """What a named agent's file makes of the tools and mode it inherits."""

    limit: ToolLimit
    mode_floor: str | None


def narrowing(agent: AgentDefinition, project_root: Path, inherited: str | None) -> Narrowing:
    """The agent's limits; raises AgentUnusable for a mode caretz does not know."""
    who = f"the agent {agent.name!r}"
    limit = tool_limit(who, agent.tools, agent.disallowed_tools, project_root, str(agent.path))
    try:
        floor = agent_floor(agent.permission_mode, inherited)
    except ValueError as error:
        raise AgentUnusable(f"{agent.path}: permissionMode: {error}") from None
    return Narrowing(limit, floor)


def narrowed_tools(parent: ToolRegistry, narrow: Narrowing) -> ToolRegistry:
    withheld = withheld_effects(narrow.mode_floor or "")
    return parent.fresh(narrow.limit, withheld)


def reads_only(registry: ToolRegistry) -> bool:
    """Whether an agent with `registry` changes nothing: it has only reading tools."""
    return all(registry.reads_only(name) or name in OWN_STATE_TOOLS for name in registry.names())


def catalog_text(agents: NamedAgents) -> str:
    """The agents as the task tool's description lists them."""
    lines = [f"- {a.name}: {a.description}" for a in agents.agents.values()]
    return "\n".join(lines)
