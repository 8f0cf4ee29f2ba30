"""Custom slash commands in the interactive session and in `caretz -p "/name args"`.

The interactive session reads the command folders again at most every few seconds (a
file added while it runs shows up in /help and completion); a command runs as a typed
message would, inside its scope (its model, its allowed tools). A `-p` prompt that is a
slash command runs the custom command of that name; any other `/name` is an error, and
nothing is sent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from caretz.config_base import ConfigError

if TYPE_CHECKING:
    from caretz.config.settings import Settings
    from caretz.runtime.custom_commands import PreparedCommand
    from caretz.slash_commands.files import Catalog, CustomCommand
    from caretz.ui.repl import Repl
    from caretz.ui.session_control import SessionControl

REFRESH_S = 2.0  # how old a read of the command folders may be


def session_catalog(repl: SessionControl, reserved: Iterable[str]) -> Catalog:
    """The session's custom commands, read again when the last read is REFRESH_S old."""
    from caretz.runtime.custom_commands import catalog_for

    now = repl.clock()
    cached = repl.custom_catalog
    if cached is not None and now - cached[0] < REFRESH_S:
        return cached[1]
    catalog = catalog_for(repl.session.settings, repl.session.workspace, reserved)
    repl.custom_catalog = (now, catalog)
    return catalog


def queue_command(repl: SessionControl, command: CustomCommand, arguments: str) -> None:
    """Ready `command` for the prompt loop to run; a problem with it is one red line."""
    from caretz.runtime.custom_commands import prepare

    try:
        repl.queued_command = prepare(repl.session.settings, command, arguments, repl.env)
    except ConfigError as error:
        repl.error(f"{error} (nothing was sent)")


def run_prepared(repl: Repl, prepared: PreparedCommand) -> None:
    """The command's turn, on its model and with its allowed tools, then back; its `!`
    commands and `@` files first, under the same scope."""
    from caretz.agent.signals import Terminated
    from caretz.runtime.command_expansion import expand_inline
    from caretz.runtime.custom_commands import command_scope

    name, model = prepared.command.name, prepared.model
    try:
        with command_scope(repl.session, prepared, repl.env):
            if model is not None and prepared.rules:
                repl.info(f"/{name} runs on {model}, with {_tools(prepared)} allowed")
            elif model is not None:
                repl.info(f"/{name} runs on {model}")
            elif prepared.rules:
                repl.info(f"/{name} runs with {_tools(prepared)} allowed")
            prompt, images = expand_inline(repl.session, prepared)
            repl.run_turn(prompt, images)
    except ConfigError as error:
        repl.error(str(error))
    except KeyboardInterrupt as stop:  # Ctrl-C while a `!` command ran
        if isinstance(_cause(stop), Terminated):
            raise _cause(stop) from None
        repl.error(f"/{name} was interrupted (nothing was sent)")
    repl.meter.forget()


def _cause(stop: KeyboardInterrupt) -> BaseException:
    """What ended a `!` command: SIGTERM or SIGHUP (Terminated) end the session too."""
    return getattr(stop, "cause", None) or stop


def _tools(prepared: PreparedCommand) -> str:
    return ", ".join(rule.text for rule in prepared.rules)


def help_rows(catalog: Catalog) -> list[tuple[str, str]]:
    """(usage, summary) for /help: `/frontend:test [pattern]`, its description and folder."""
    rows = []
    for command in catalog.commands.values():
        usage = f"/{command.name} {command.argument_hint}".rstrip()
        summary = command.description or "(no description)"
        rows.append((usage, f"{summary} [dim]({command.label})[/]"))
    return rows


def headless_command(
    settings: Settings,
    workspace: Path,
    parsed: tuple[str, str],
    reserved: Iterable[str],
    env: Mapping[str, str],
) -> PreparedCommand:
    """The custom command a `-p "/name args"` prompt names (`parsed`: name and arguments);
    raises ConfigError for a built-in or unknown name, or a command that cannot run."""
    from caretz.runtime.custom_commands import catalog_for, prepare

    name, arguments = parsed
    reserved = list(reserved)
    if name in reserved:
        raise ConfigError(
            f"/{name} is a command of the interactive session and does not run with -p "
            "(nothing was sent)"
        )
    command = catalog_for(settings, workspace, reserved).get(name)
    if command is None:
        raise ConfigError(
            f"unknown command /{name}: no custom command of that name in .caretz/commands/, "
            f"{settings.config_path.parent / 'commands'} or .claude/commands/ (nothing was sent)"
        )
    return prepare(settings, command, arguments, env)
