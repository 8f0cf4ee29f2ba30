"""Rewinding a live session: its files, its conversation or both back to a checkpoint
(caretz/agent/rewind.py), the live conversation following the log."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from caretz.agent.rewind import Rewound, SessionRewind
from caretz.config_base import ConfigError

if TYPE_CHECKING:
    from caretz.app.session import Session
    from caretz.checkpoints import Checkpoint
    from caretz.checkpoints.events import Scope


class CheckpointsOff(ConfigError):
    """The session takes no checkpoints: switched off in the profile, or no git."""


def rewinder(session: Session) -> SessionRewind:
    checkpoints = session.checkpoints
    if checkpoints is None:
        raise CheckpointsOff("checkpoints are off in this profile (checkpoints.enabled)")
    if checkpoints.store is None or not checkpoints.active:
        raise CheckpointsOff(f"checkpoints are off: {checkpoints.off_reason}")
    return SessionRewind(checkpoints.store, session.id, session.log, session.workspace)


def rewind(
    session: Session, target: Checkpoint, scope: Scope, allowed: Sequence[str] = ()
) -> Rewound:
    """Raises RestoreConflict (files changed outside caretz, not `allowed`) or another
    CheckpointError; nothing changed then."""
    done = rewinder(session).rewind(target, scope, allowed=list(allowed))
    follow(session, done)
    return done


def undo(session: Session, allowed: Sequence[str] = ()) -> Rewound:
    """Raises UnknownCheckpoint when there is nothing to undo."""
    target, scope = rewinder(session).undo_target()
    return rewind(session, target, scope, allowed)


def follow(session: Session, done: Rewound) -> None:
    """The live conversation as the log now has it."""
    if done.history is None:
        return
    conversation = session.agent.conversation
    conversation.messages = list(done.history.conversation)
    conversation.last_request = done.history.last_request
    conversation.last_answer = done.history.last_answer
    conversation.context.forget()
