"""`session/list`: caretz's sessions of a folder's project, newest first."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from acp.schema import ListSessionsResponse, SessionInfo

from caretz.checkpoints.project import project_root
from caretz.session.store import SessionStore
from caretz.text import one_line

LISTED = 100  # the newest sessions; older ones stay reachable with `caretz sessions list`
TITLE_CHARS = 80


def session_list(data_dir: Path, cwd: str | None) -> ListSessionsResponse:
    store = SessionStore(data_dir)
    project = project_root(Path(cwd)) if cwd else None
    infos = store.list(project)[-LISTED:]
    return ListSessionsResponse(
        sessions=[
            SessionInfo(
                session_id=info.id,
                cwd=info.folder or str(project or ""),
                title=one_line(info.title, TITLE_CHARS) or None,
                updated_at=datetime.fromtimestamp(info.updated, UTC).isoformat(),
            )
            for info in reversed(infos)
        ]
    )
