"""A prepared custom command run on a session: inside its scope (its model, its
allowed tools), its `!` commands and `@` files first, then its turn and the guard's
automatic resumes; the session's model and rules after."""

from __future__ import annotations

from typing import TYPE_CHECKING

from caretz.agent.driver import run_with_auto_resume
from caretz.app.outcome import Outcome, interrupted_outcome, turn_outcome, usage_outcome
from caretz.config_base import ConfigError
from caretz.runtime.command_expansion import expand_inline
from caretz.runtime.custom_commands import PreparedCommand, command_scope

if TYPE_CHECKING:
    from caretz.app.session import Session


def run_command(session: Session, prepared: PreparedCommand) -> Outcome:
    """The command's outcome; a model it cannot switch to or a `!` command refused is a
    usage error, an interrupt while its `!` commands run sends nothing."""
    name = prepared.command.name
    try:
        with command_scope(session, prepared, session.env):
            try:
                prompt = expand_inline(session, prepared)
            except KeyboardInterrupt as stop:
                message = f"/{name} was interrupted (nothing was sent)"
                return interrupted_outcome(_cause(stop), message, sent=False)
            return turn_outcome(run_with_auto_resume(session.agent, prompt))
    except ConfigError as error:
        return usage_outcome(str(error))
    finally:
        session.agent.conversation.context.forget()  # measured on the command's model


def _cause(stop: KeyboardInterrupt) -> KeyboardInterrupt:
    """What ended a `!` command: Ctrl-C, or SIGTERM / SIGHUP, whose exit code counts."""
    cause = getattr(stop, "cause", None)
    return cause if isinstance(cause, KeyboardInterrupt) else stop
