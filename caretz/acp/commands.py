"""The session's custom commands (`.caretz/commands/`, the user's, `.claude/commands/`)
as ACP's available commands, so the editor offers them after a `/`; a prompt that
starts with `/name` runs one (docs/commands.md)."""

from __future__ import annotations

from pathlib import Path

from acp.schema import (
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    UnstructuredCommandInput,
)

from caretz.permissions.settings import find_project_root
from caretz.slash_commands.files import command_folders, load_catalog
from caretz.slash_commands.names import RESERVED_NAMES


def available_commands(workspace: Path, config_dir: Path) -> AvailableCommandsUpdate:
    catalog = load_catalog(
        command_folders(find_project_root(workspace), config_dir), RESERVED_NAMES
    )
    return AvailableCommandsUpdate(
        session_update="available_commands_update",
        available_commands=[
            AvailableCommand(
                name=command.name,
                description=command.description or f"a custom command ({command.label})",
                input=AvailableCommandInput(UnstructuredCommandInput(hint=command.argument_hint))
                if command.argument_hint
                else None,
            )
            for command in catalog.commands.values()
        ],
    )
