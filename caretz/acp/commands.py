"""The session's skills a user may run (docs/skills.md) and its custom commands
(`.caretz/commands/`, the user's, `.claude/commands/`, the installed plugins') as ACP's
available commands, so the editor offers them after a `/`; a prompt that starts with
`/name` runs one (a skill before a command of its name, as in the session)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from acp.schema import (
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    UnstructuredCommandInput,
)

from caretz.runtime.project_trust import command_catalog, has_skills, skill_set
from caretz.slash_commands.names import RESERVED_NAMES

if TYPE_CHECKING:
    from caretz.config.settings import Settings


def available_commands(settings: Settings, workspace: Path) -> AvailableCommandsUpdate:
    catalog = command_catalog(settings, workspace, RESERVED_NAMES)
    skills = user_skills(settings, workspace)
    return AvailableCommandsUpdate(
        session_update="available_commands_update",
        available_commands=[
            *(AvailableCommand(name=name, description=about) for name, about in skills.items()),
            *(
                AvailableCommand(
                    name=command.name,
                    description=command.description or f"a custom command ({command.label})",
                    input=AvailableCommandInput(
                        UnstructuredCommandInput(hint=command.argument_hint)
                    )
                    if command.argument_hint
                    else None,
                )
                for command in catalog.commands.values()
                if command.name not in skills
            ),
        ],
    )


def user_skills(settings: Settings, workspace: Path) -> dict[str, str]:
    """The skills `/name` runs here, by name, with their descriptions."""
    home = Path(os.environ.get("HOME") or Path.home())
    if not has_skills(workspace, home, settings.data_dir):
        return {}
    found = skill_set(settings, workspace, home).skills.values()
    return {skill.name: skill.description for skill in found if skill.user_invocable}
