"""Rewinding a session: its files, its conversation or both back to a checkpoint
(caretz/agent/rewind.py). A live session's conversation follows the log; a past one
(`caretz rewind`) is found by its ID, with the folder it ran in and the project its
checkpoints cover, read from its log.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from caretz.agent.rewind import Rewound, SessionRewind
from caretz.app.events import session_places
from caretz.checkpoints import CheckpointStore, SnapshotLimits
from caretz.config_base import ConfigError
from caretz.session.events import EventLog, read_events
from caretz.session.store import SessionStore

if TYPE_CHECKING:
    from caretz.app.session import AppSession
    from caretz.checkpoints import Checkpoint
    from caretz.checkpoints.events import Scope
    from caretz.config.settings import Settings


@dataclass(frozen=True)
class LoggedSession:
    """A past session, as its log tells: where it ran, which project's checkpoints."""

    id: str
    events_path: Path
    workspace: Path
    project: Path


def logged_session(settings: Settings, session: str | None, here: Path) -> LoggedSession:
    """The session `session` names (an ID or a unique part; None: the latest of the
    project `here`); raises SessionNotFound."""
    sessions = SessionStore(settings.data_dir)
    events_path = sessions.events_path(sessions.latest(here) if session is None else session)
    workspace, project = session_places(list(read_events(events_path)))
    return LoggedSession(events_path.parent.name, events_path, workspace, project)


def open_rewind(settings: Settings, logged: LoggedSession) -> SessionRewind:
    """The rewind of a past session: its log, and its project's checkpoints; raises
    CheckpointError."""
    limits = SnapshotLimits(size_cap=settings.values.checkpoint_size_cap)
    store = CheckpointStore.open(settings.data_dir, logged.project, limits=limits)
    return SessionRewind(store, logged.id, EventLog(logged.events_path), logged.workspace)


class CheckpointsOff(ConfigError):
    """The session takes no checkpoints: switched off in the profile, or no git."""


def rewinder(session: AppSession) -> SessionRewind:
    checkpoints = session.checkpoints
    if checkpoints is None:
        raise CheckpointsOff("checkpoints are off in this profile (checkpoints.enabled)")
    if checkpoints.store is None or not checkpoints.active:
        raise CheckpointsOff(f"checkpoints are off: {checkpoints.off_reason}")
    return SessionRewind(checkpoints.store, session.id, session.log, session.workspace)


def rewind(
    session: AppSession, target: Checkpoint, scope: Scope, allowed: Sequence[str] = ()
) -> Rewound:
    """Raises RestoreConflict (files changed outside caretz, not `allowed`) or another
    CheckpointError; nothing changed then."""
    done = rewinder(session).rewind(target, scope, allowed=list(allowed))
    follow(session, done)
    return done


def follow(session: AppSession, done: Rewound) -> None:
    """The live conversation as the log now has it."""
    if done.history is None:
        return
    conversation = session.agent.conversation
    conversation.messages = list(done.history.conversation)
    conversation.last_request = done.history.last_request
    conversation.last_answer = done.history.last_answer
    conversation.context.forget()
