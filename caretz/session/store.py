"""Session folders under the data dir: create, find, list, and rebuild a conversation."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from caretz.config_base import ConfigError
from caretz.messages import Message, answer_dangling_calls
from caretz.session.events import read_events

EVENTS_FILE = "events.jsonl"
SESSION_ENDED = "Not run: the session ended first."


class SessionNotFound(LookupError):
    pass


@dataclass(frozen=True)
class SessionInfo:
    id: str
    path: Path
    started: float
    model: str
    first_prompt: str
    turns: int
    last_status: str


@dataclass(frozen=True)
class History:
    """What a resumed session carries on from."""

    conversation: list[Message]
    turns: int
    last_request: str | None
    last_answer: str | None


_FIX_DATA_DIR = "point CARETZ_DATA_DIR at a folder caretz can write"


class SessionStore:
    """Raises ConfigError when the data folder is a file or cannot be written."""

    def __init__(self, data_dir: Path):
        if data_dir.exists() and not data_dir.is_dir():
            raise ConfigError(f"the data folder {data_dir} is a file: {_FIX_DATA_DIR}")
        self.root = data_dir / "sessions"

    def create(self, clock: float | None = None) -> tuple[str, Path]:
        stamp = datetime.fromtimestamp(clock if clock is not None else time.time())
        session_id = f"{stamp:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"
        folder = self.root / session_id
        try:
            folder.mkdir(parents=True, exist_ok=False)
        except OSError as error:
            reason = error.strerror or type(error).__name__
            raise ConfigError(f"cannot create {folder}: {reason}: {_FIX_DATA_DIR}") from None
        return session_id, folder / EVENTS_FILE

    def events_path(self, session_id: str) -> Path:
        path = self.root / session_id / EVENTS_FILE
        if not path.is_file():
            matches = sorted(self.root.glob(f"{session_id}*/{EVENTS_FILE}"))
            if len(matches) != 1:
                raise SessionNotFound(
                    f"no session {session_id!r} under {self.root} (see `caretz sessions list`)"
                )
            path = matches[0]
        return path

    def latest(self) -> str:
        ids = self.ids()
        if not ids:
            raise SessionNotFound(f"no sessions yet under {self.root}")
        return ids[-1]

    def ids(self) -> list[str]:
        if not self.root.is_dir():
            return []
        folders = [p for p in self.root.iterdir() if (p / EVENTS_FILE).is_file()]
        return [p.name for p in sorted(folders, key=lambda p: (p / EVENTS_FILE).stat().st_mtime)]

    def list(self) -> list[SessionInfo]:
        return [self.info(session_id) for session_id in self.ids()]

    def info(self, session_id: str) -> SessionInfo:
        path = self.events_path(session_id)
        started, model, first_prompt, turns, status = 0.0, "", "", 0, ""
        for event in read_events(path):
            kind = event.get("type")
            if kind == "Session.Started":
                started, model = event.get("ts", 0.0), event.get("model", "")
            elif kind == "Turn.Started" and event.get("agent", "main") == "main":
                turns += 1
                first_prompt = first_prompt or event.get("prompt", "")
            elif kind == "Turn.Ended" and event.get("agent", "main") == "main":
                status = event.get("status", "")
        return SessionInfo(session_id, path.parent, started, model, first_prompt, turns, status)


def rebuild_history(events: list[dict[str, Any]]) -> History:
    """The main agent's conversation as it stood at the end of the log.

    Guard notes were never part of the conversation, so they are not rebuilt;
    tool calls left without a result (a killed process) get one saying so. A
    `Session.Compacted` event holds the whole conversation after a compaction.
    """
    conversation: list[Message] = []
    turns, last_request, last_answer = 0, None, None
    for event in events:
        if event.get("agent", "main") != "main":
            continue
        kind = event.get("type")
        if kind == "Turn.Started":
            answer_dangling_calls(conversation, SESSION_ENDED)
            conversation.append(Message("user", event["prompt"]))
            turns, last_request = turns + 1, event["prompt"]
        elif kind == "Model.Response":
            conversation.append(Message.from_dict(event["message"]))
        elif kind == "Tool.Result":
            conversation.append(
                Message(
                    "tool",
                    event.get("output", ""),
                    tool_call_id=event.get("call_id"),
                    is_error=not event.get("ok", False),
                )
            )
        elif kind == "Turn.Ended":
            last_answer = event.get("text", last_answer)
        elif kind == "Session.Compacted":
            # The compacted conversation replaces everything rebuilt so far.
            conversation = [Message.from_dict(m) for m in event["conversation"]]
    answer_dangling_calls(conversation, SESSION_ENDED)
    return History(conversation, turns, last_request, last_answer)
