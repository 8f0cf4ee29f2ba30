"""The session's custom commands (`.caretz/commands/`, the user's, `.claude/commands/`)
as ACP's available commands, so the editor offers them after a `/`; a prompt that
starts with `/name` runs one (docs/commands.md)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from acp.schema import (
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    UnstructuredCommandInput,
)

from caretz.runtime.custom_commands import catalog_for
from caretz.slash_commands.names import RESERVED_NAMES

if TYPE_CHECKING:
    from caretz.config.settings import Settings


def available_commands(settings: Settings, workspace: Path) -> AvailableCommandsUpdate:
    catalog = catalog_for(settings, workspace, RESERVED_NAMES)
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
