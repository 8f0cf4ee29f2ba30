"""`caretz sessions list` and `caretz sessions show`: past sessions, from their logs."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from caretz.checkpoints.project import project_root
from caretz.config.loading import data_dir
from caretz.config_base import ConfigError
from caretz.session.events import read_events
from caretz.session.store import SessionNotFound, SessionStore
from caretz.ui.sessions_text import describe_event, list_line
from caretz.usage_error import fail

if TYPE_CHECKING:
    from caretz.config.overrides import Flags


def list_sessions(flags: Flags, every_folder: bool = False, limit: int = 20) -> int:
    """This folder's sessions (every folder's with `every_folder`), the last `limit`."""
    try:
        store = SessionStore(data_dir(os.environ))
    except ConfigError as error:
        return fail(str(error))
    project = None if every_folder else project_root(Path.cwd())
    sessions = store.list(project)
    if not sessions:
        where = "" if project is None else f" in {project} (--all lists every folder's)"
        sys.stdout.write(f"no sessions yet{where}\n")
    for info in sessions[-limit:] if limit > 0 else sessions:
        sys.stdout.write(list_line(info) + "\n")
    return 0


def show_session(flags: Flags, session_id: str) -> int:
    try:
        path = SessionStore(data_dir(os.environ)).events_path(session_id)
    except (ConfigError, SessionNotFound) as error:
        return fail(str(error))
    for event in read_events(path):
        line = describe_event(event)
        if line:
            sys.stdout.write(line + "\n")
    return 0
