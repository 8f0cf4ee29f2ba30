"""A prepared custom command run on a session: inside its scope (its model, its
allowed tools), its `!` commands and `@` files first, then its turn and the guard's
automatic resumes; the session's model after.

The command's `allowed-tools` travel as a `TurnGrant` on the tool context of its turn
(and of each `!` and `@` call), never on the session's permissions, which every agent
and view shares: deny and ask rules still win over them, and no command leaves the
sandbox on their strength.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from typing import TYPE_CHECKING

from caretz.agent.driver import run_with_auto_resume
from caretz.agent.outcomes import Outcome
from caretz.app.command_expansion import CommandRefused, expand_inline
from caretz.app.outcome import interrupted_outcome, usage_outcome
from caretz.app.switching import switch_model
from caretz.config_base import ConfigError
from caretz.runtime.custom_commands import PreparedCommand
from caretz.runtime.project_trust import project_command
from caretz.tools.policy import TurnGrant

if TYPE_CHECKING:
    from caretz.app.session import AppSession


def run_command(session: AppSession, prepared: PreparedCommand) -> Outcome:
    """The command's outcome; a model it cannot switch to or a `!` command refused is a
    usage error, an interrupt while its `!` commands run sends nothing."""
    name = prepared.command.name
    try:
        prepared = as_trusted(session, prepared)
        with command_model(session, prepared):
            try:
                images = session.attached_images("")  # its @ images come with its @ files
                prompt, read = expand_inline(session, prepared)
            except KeyboardInterrupt as stop:
                message = f"/{name} was interrupted (nothing was sent)"
                return interrupted_outcome(_cause(stop), message, sent=False)
            with granted(session, TurnGrant(prepared.rules)):
                return run_with_auto_resume(session.agent, prompt, [*images, *read])
    except ConfigError as error:
        return usage_outcome(str(error))
    finally:
        session.agent.conversation.context.forget()  # measured on the command's model


def as_trusted(session: AppSession, prepared: PreparedCommand) -> PreparedCommand:
    """The command as the project's trust lets it run: a project's command file that runs
    shell lines is refused until the project's configuration is approved (and the file
    says what was approved), and one that only grants tools runs without its grant."""
    command = prepared.command
    if session.trust.command_approved(command):
        return prepared
    widening = project_command(command, session.trust.config.root)
    if widening is not None and widening.shell:
        raise CommandRefused(
            f"{command.path}: /{command.name} runs shell lines, and this project's "
            "configuration is not approved as it is now (nothing was sent; see what it does "
            "and approve it with: caretz trust)"
        )
    return dataclasses.replace(prepared, rules=())


@contextlib.contextmanager
def command_model(session: AppSession, prepared: PreparedCommand) -> Iterator[None]:
    """The command's model for what runs inside (a switch that fails raises ConfigError
    before anything runs); the session's after."""
    before = session.agent.config.model_ref
    command_model = prepared.model
    if command_model is None or command_model == before:
        yield
        return
    switch_model(session, command_model)
    try:
        yield
    finally:
        switch_model(session, before)


@contextlib.contextmanager
def granted(session: AppSession, grant: TurnGrant) -> Iterator[None]:
    """The agent's tool context carries `grant` for the turn inside."""
    agent = session.agent
    parts = agent.parts
    agent.parts = dataclasses.replace(
        parts, tool_ctx=dataclasses.replace(parts.tool_ctx, grant=grant)
    )
    try:
        yield
    finally:
        agent.parts = parts


def _cause(stop: KeyboardInterrupt) -> KeyboardInterrupt:
    """What ended a `!` command: Ctrl-C, or SIGTERM / SIGHUP, whose exit code counts."""
    cause = getattr(stop, "cause", None)
    return cause if isinstance(cause, KeyboardInterrupt) else stop
