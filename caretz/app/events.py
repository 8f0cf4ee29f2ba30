"""The session events the application layer reads, one function per event type, so a
change in how events are kept touches this module only."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from caretz.checkpoints.events import CREATED
from caretz.checkpoints.project import project_root

STARTS = ("Session.Started", "Session.Resumed")


def started_cwd(event: dict[str, Any]) -> Path | None:
    """The folder a `Session.Started` / `Session.Resumed` ran in (None: another event)."""
    return Path(event["cwd"]) if event.get("type") in STARTS else None


def checkpoint_project(event: dict[str, Any]) -> Path | None:
    """The project a `Checkpoint.Created` covers (None: another event, or none named)."""
    if event.get("type") == CREATED and event.get("project"):
        return Path(event["project"])
    return None


def session_places(events: Sequence[dict[str, Any]]) -> tuple[Path, Path]:
    """(the session's working folder, the project its checkpoints cover), from its log."""
    cwds = [cwd for cwd in map(started_cwd, events) if cwd is not None]
    workspace = cwds[-1] if cwds else Path(os.getcwd())
    projects = [project for project in map(checkpoint_project, events) if project is not None]
    return workspace, projects[-1] if projects else project_root(workspace)
