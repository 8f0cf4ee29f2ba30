"""`caretz -r` without an ID: this folder's sessions, newest first, to pick one with the
arrow keys and Enter (Claude Code's `--resume` picker). Ctrl-C picks none."""

from __future__ import annotations

import time
from collections.abc import Sequence

from prompt_toolkit.shortcuts import choice

from caretz.session.store import SessionInfo
from caretz.ui.sessions_text import age_text, prompt_preview

SHOWN = 20  # the newest; older ones are reached by ID (`caretz sessions list`)


def pick_session(sessions: Sequence[SessionInfo], now: float | None = None) -> str | None:
    """The ID of the session picked among `sessions` (oldest first, as listed), or None."""
    now = time.time() if now is None else now
    newest = list(reversed(sessions[-SHOWN:]))
    options = [(info.id, _label(info, now)) for info in newest]
    try:
        return choice(
            message="Resume which session? (↑↓, Enter; Ctrl-C: none)",
            options=options,
            default=newest[0].id,
        )
    except (KeyboardInterrupt, EOFError):
        return None


def _label(info: SessionInfo, now: float) -> str:
    parts = [age_text(now - info.updated), f"{info.turns} turn(s)", info.model]
    return f"{prompt_preview(info) or '(no prompt)'}  · " + " · ".join(parts)
