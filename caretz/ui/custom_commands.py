"""Custom slash commands in the interactive session.

The interactive session reads the command folders again at most every few seconds (a
file added while it runs shows up in /help and completion); a command typed is prepared
here (a problem with it is one red line) and run by the prompt loop through the app's
Session, as a typed message would be, inside its scope (its model, its allowed tools).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table

from caretz.config_base import ConfigError
from caretz.runtime.custom_commands import catalog_for, prepare

if TYPE_CHECKING:
    from caretz.runtime.skills import SessionSkills
    from caretz.slash_commands.files import Catalog, CustomCommand
    from caretz.ui.session_control import SessionControl

REFRESH_S = 2.0  # how old a read of the command folders may be


def session_catalog(repl: SessionControl, reserved: Iterable[str]) -> Catalog:
    """The session's custom commands, read again when the last read is REFRESH_S old."""
    now = repl.clock()
    cached = repl.custom_catalog
    if cached is not None and now - cached[0] < REFRESH_S:
        return cached[1]
    catalog = catalog_for(repl.session.settings, repl.session.workspace, reserved)
    repl.custom_catalog = (now, catalog)
    return catalog


def queue_command(repl: SessionControl, command: CustomCommand, arguments: str) -> None:
    """Ready `command` for the prompt loop to run; a problem with it is one red line."""
    try:
        repl.queued_command = prepare(repl.session.settings, command, arguments, repl.env)
    except ConfigError as error:
        repl.error(f"{error} (nothing was sent)")


def help_rows(catalog: Catalog) -> list[tuple[str, str]]:
    """(usage, summary) for /help: `/frontend:test [pattern]`, its description and folder."""
    rows = []
    for command in catalog.commands.values():
        usage = f"/{command.name} {command.argument_hint}".rstrip()
        summary = command.description or "(no description)"
        rows.append((usage, f"{summary} [dim]({command.label})[/]"))
    return rows


def skill_rows(skills: SessionSkills | None) -> list[tuple[str, str]]:
    """(name, description and scope) of each skill the user may run by name."""
    shown = [skill for skill in skills.skills if skill.user_invocable] if skills else []
    return [(skill.name, f"{skill.description[:80]} ({skill.scope})") for skill in shown]


def help_table(rows: list[tuple[str, str]]) -> Table:
    table = Table(box=None, show_header=False, padding=(0, 2, 0, 0))
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column()
    for usage, summary in rows:
        table.add_row(escape(usage), escape(summary))
    return table
