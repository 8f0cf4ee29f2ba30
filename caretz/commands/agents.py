"""`caretz agents list`: the named subagents that apply here, where each comes from, what it
may use, and the files left out (shadowed, unreadable, leading out of the project)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from caretz.agent_files.definition import AgentDefinition
from caretz.commands.loading import with_settings
from caretz.config_base import ConfigError
from caretz.runtime.project_trust import agent_catalog
from caretz.runtime.subagents import resolved_model
from caretz.usage_error import fail

if TYPE_CHECKING:
    from caretz.config.overrides import Flags
    from caretz.config.settings import Settings


def agents_command(flags: Flags, output: str = "text") -> int:
    return with_settings(flags, lambda settings: list_agents(settings, output))


def list_agents(settings: Settings, output: str, workspace: Path | None = None) -> int:
    """Print the agents; exit 2 for an unknown --output or a configuration caretz cannot read."""
    if output not in ("text", "json"):
        return fail(f"--output {output!r}: use text or json")
    try:
        catalog = agent_catalog(settings, workspace or Path.cwd(), Path.home())
    except ConfigError as error:
        return fail(str(error))
    rows = [agent_data(settings, agent) for agent in catalog.agents.values()]
    if output == "json":
        data = {"agents": rows, "warnings": catalog.warnings}
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return 0
    if not rows:
        sys.stdout.write("no named agents here (docs/agents.md says where they go)\n")
    for row in rows:
        sys.stdout.write("".join(line + "\n" for line in agent_lines(row)))
    sys.stdout.write("".join(f"warning: {line}\n" for line in catalog.warnings))
    return 0


def agent_data(settings: Settings, agent: AgentDefinition) -> dict[str, Any]:
    """An agent as the listing shows it; `model_error`: why its model does not resolve."""
    data: dict[str, Any] = {
        "name": agent.name,
        "scope": agent.scope,
        "path": os.fspath(agent.path),
        "description": agent.description,
        "tools": list(agent.tools) if agent.tools is not None else None,
        "disallowed_tools": list(agent.disallowed_tools),
        "permission_mode": agent.permission_mode,
        "model": agent.model or "inherit",
        "skills": list(agent.skills),
        "isolation": agent.isolation,
    }
    if agent.model is not None:
        try:
            data["model"] = resolved_model(settings, agent.model, os.environ)
        except ConfigError as error:
            data["model_error"] = str(error)
    return data


def agent_lines(row: dict[str, Any]) -> list[str]:
    tools = ", ".join(row["tools"]) if row["tools"] is not None else "all the session's"
    if row["disallowed_tools"]:
        tools += " but " + ", ".join(row["disallowed_tools"])
    model = row["model"] if "model_error" not in row else f"cannot run: {row['model_error']}"
    lines = [
        f"{row['name']}  ({row['scope']}: {row['path']})",
        f"  {row['description'][:160]}",
        f"  tools: {tools}; model: {model}; mode: {row['permission_mode'] or 'inherit'}",
    ]
    if row["skills"]:
        lines.append("  skills: " + ", ".join(row["skills"]))
    return lines
