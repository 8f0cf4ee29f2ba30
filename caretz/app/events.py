"""The session events the application layer reads, one function per event type, so a
change in how events are kept touches this module only."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from caretz.checkpoints.project import project_root
from caretz.session.records.base import Record
from caretz.session.records.checkpoints import CheckpointCreated
from caretz.session.records.session import SessionOpened


def started_cwd(event: Record) -> Path | None:
    """The folder a `Session.Started` / `Session.Resumed` ran in (None: another event)."""
    return Path(event.cwd) if isinstance(event, SessionOpened) else None


def checkpoint_project(event: Record) -> Path | None:
    """The project a `Checkpoint.Created` covers (None: another event, or none named)."""
    if isinstance(event, CheckpointCreated) and event.project:
        return Path(event.project)
    return None


def session_places(events: Sequence[Record]) -> tuple[Path, Path]:
    """(the session's working folder, the project its checkpoints cover), from its log."""
    cwds = [cwd for cwd in map(started_cwd, events) if cwd is not None]
    workspace = cwds[-1] if cwds else Path(os.getcwd())
    projects = [project for project in map(checkpoint_project, events) if project is not None]
    return workspace, projects[-1] if projects else project_root(workspace)
