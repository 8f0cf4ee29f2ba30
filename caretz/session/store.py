"""Session folders under the data dir: create, find, list, and rebuild a conversation."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterable
from dataclasses import field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from caretz import private_data
from caretz.config_base import ConfigError
from caretz.lazy import lazy_module
from caretz.lazy_dataclass import lazy_dataclass
from caretz.messages import ImageLoader, Message, ToolCall, answer_dangling_calls, restore_images
from caretz.session.events import read_events
from caretz.session.records.base import LoopRecord, Record
from caretz.session.records.checkpoints import CheckpointRestored
from caretz.session.records.loop import (
    ModelReplied,
    ToolCalled,
    ToolReturned,
    TurnEnded,
    TurnStarted,
)
from caretz.session.records.session import (
    SessionChanged,
    SessionCompacted,
    SessionOpened,
    SessionStarted,
)

if TYPE_CHECKING:
    from caretz.session import images as session_images
else:
    # The session's image files: only a resumed session reads them back.
    session_images = lazy_module("caretz.session.images")

EVENTS_FILE = "events.jsonl"
SESSION_ENDED = "Not run: the session ended first."
OUTCOME_UNKNOWN = (
    "Outcome unknown: this call started, but caretz stopped before it finished (it was "
    "killed or crashed), so whether it did its work, in full or in part, is unknown. "
    "Check before running it again."
)


class SessionNotFound(LookupError):
    pass


@lazy_dataclass(frozen=True, kw_only=True)
class SessionInfo:
    id: str
    path: Path
    started: float
    model: str
    first_prompt: str
    turns: int
    last_status: str
    folder: str = ""  # where it started
    last_prompt: str = ""
    updated: float = 0.0  # when its log was last written

    @property
    def title(self) -> str:
        """What every list of sessions calls it (`sessions list`, `/sessions`, an editor's
        session list): its first prompt, else its last."""
        return self.first_prompt or self.last_prompt


@lazy_dataclass(frozen=True, kw_only=True)
class History:
    """What a resumed session carries on from."""

    conversation: list[Message]
    turns: int
    last_request: str | None
    last_answer: str | None
    # The main turns whose prompts the conversation holds (a rewind drops some).
    live_turns: tuple[int, ...] = ()


_FIX_DATA_DIR = "point CARETZ_DATA_DIR at a folder caretz can write"


class SessionStore:
    """Raises ConfigError when the data folder is a file, DataWriteFailed when it cannot
    be written."""

    def __init__(self, data_dir: Path):
        if data_dir.exists() and not data_dir.is_dir():
            raise ConfigError(f"the data folder {data_dir} is a file: {_FIX_DATA_DIR}")
        self.root = data_dir / "sessions"

    def create(self, clock: float | None = None) -> tuple[str, Path]:
        stamp = datetime.fromtimestamp(clock if clock is not None else time.time())
        session_id = f"{stamp:%Y%m%d-%H%M%S}-{os.urandom(2).hex()}"
        folder = self.root / session_id
        try:
            private_data.make_new_dir(folder)
        except private_data.DataWriteFailed:
            raise  # a full or read-only data folder: its own line, exit 1, at the front end
        except OSError as error:
            reason = error.strerror or type(error).__name__
            raise ConfigError(f"cannot create {folder}: {reason}: {_FIX_DATA_DIR}") from None
        return session_id, folder / EVENTS_FILE

    def discard_unused(self, session_id: str) -> bool:
        """Remove the session's folder if its log holds nothing but its start (no turn, no
        hook, no command ran in it); whether it did."""
        folder = self.root / session_id
        if not all(isinstance(e, SessionStarted) for e in read_events(folder / EVENTS_FILE)):
            return False
        shutil.rmtree(folder, ignore_errors=True)
        return True

    def model_of(self, session_id: str) -> str:
        """The model the session last ran on: its start's, or its last switch's ("" if none)."""
        model = ""
        for event in read_events(self.events_path(session_id)):
            if isinstance(event, SessionOpened | SessionChanged) and event.model:
                model = event.model
        return model

    def events_path(self, session_id: str) -> Path:
        """The log of the session `session_id` names: its whole ID or any unique part."""
        path = self.root / session_id / EVENTS_FILE
        if path.is_file():
            return path
        matches = [name for name in self.ids() if session_id and session_id in name]
        if len(matches) > 1:
            raise SessionNotFound(
                f"{session_id!r} is part of {len(matches)} session IDs "
                f"({', '.join(matches[-3:])}{', …' if len(matches) > 3 else ''}): give more of it"
            )
        if not matches:
            raise SessionNotFound(
                f"no session {session_id!r} under {self.root} (see `caretz sessions list --all`)"
            )
        return self.root / matches[0] / EVENTS_FILE

    def latest(self, project: Path | None = None) -> str:
        """The session written last; with `project`, the last of that project's."""
        ids = self.ids() if project is None else self.ids_of(project)
        if ids:
            return ids[-1]
        if project is None:
            raise SessionNotFound(f"no sessions yet under {self.root}")
        raise SessionNotFound(
            f"no session of this folder ({project}) yet; `caretz sessions list --all` lists "
            "every folder's, and --resume ID opens one of them"
        )

    def ids(self) -> list[str]:
        """Every session's ID, the one written last at the end."""
        if not self.root.is_dir():
            return []
        folders = [p for p in self.root.iterdir() if (p / EVENTS_FILE).is_file()]
        return [p.name for p in sorted(folders, key=lambda p: (p / EVENTS_FILE).stat().st_mtime)]

    def ids_of(self, project: Path) -> list[str]:
        """The sessions of `project` (a checkpoint root), the one written last at the end."""
        return [name for name in self.ids() if in_project(self.project_of(name), project)]

    def project_of(self, session_id: str) -> tuple[str, str]:
        """(the project recorded when the session started, else "", its folder), read
        from the log's first lines."""
        for event in read_events(self.root / session_id / EVENTS_FILE):
            if isinstance(event, SessionStarted):
                return str(event.project or ""), str(event.cwd or "")
        return "", ""

    def list(self, project: Path | None = None) -> list[SessionInfo]:
        ids = self.ids() if project is None else self.ids_of(project)
        return [self.info(session_id) for session_id in ids]

    def info(self, session_id: str) -> SessionInfo:
        path = self.events_path(session_id)
        started, model, first_prompt, turns, status, folder = 0.0, "", "", 0, "", ""
        last_prompt = ""
        for event in read_events(path):
            if isinstance(event, SessionStarted):
                started, model = event.ts or 0.0, event.model
                folder = str(event.cwd or "")
            elif isinstance(event, TurnStarted) and event.agent == "main":
                turns += 1
                last_prompt = event.prompt
                first_prompt = first_prompt or last_prompt
            elif isinstance(event, TurnEnded) and event.agent == "main":
                status = event.status
        return SessionInfo(
            id=path.parent.name,
            path=path.parent,
            started=started,
            model=model,
            first_prompt=first_prompt,
            turns=turns,
            last_status=status,
            folder=folder,
            last_prompt=last_prompt,
            updated=path.stat().st_mtime,
        )


def in_project(recorded: tuple[str, str], project: Path) -> bool:
    """Whether a session (its recorded project and folder) is one of `project`'s. A log
    from before projects were recorded counts by its folder: the project or inside it."""
    root, folder = recorded
    if root:
        return Path(root) == project
    return bool(folder) and (Path(folder) == project or project in Path(folder).parents)


_CONVERSATION_SCOPES = ("conversation", "both")


@lazy_dataclass(kw_only=True)
class _Rebuilding:
    """The conversation as the log is read; saved at each turn's start and each rewind."""

    conversation: list[Message] = field(default_factory=list)
    turns: int = 0
    last_request: str | None = None
    last_answer: str | None = None
    live_turns: tuple[int, ...] = ()
    started: set[str] = field(default_factory=set)  # calls whose Tool.Called was logged

    def unanswered(self, call: ToolCall) -> str:
        """What a call left without a result gets: it started, or it never ran."""
        return OUTCOME_UNKNOWN if call.id in self.started else SESSION_ENDED

    def saved(self) -> _Rebuilding:
        answer_dangling_calls(self.conversation, self.unanswered)
        return replace(self, conversation=list(self.conversation))

    def go_back_to(self, saved: _Rebuilding) -> None:
        self.conversation = list(saved.conversation)
        self.last_request, self.last_answer = saved.last_request, saved.last_answer
        self.live_turns = saved.live_turns  # `turns` only grows: numbers are never reused

    def history(self) -> History:
        answer_dangling_calls(self.conversation, self.unanswered)
        return History(
            conversation=self.conversation,
            turns=self.turns,
            last_request=self.last_request,
            last_answer=self.last_answer,
            live_turns=self.live_turns,
        )


def read_history(events_path: Path) -> History:
    """The conversation of the session whose log is `events_path`, its images read back
    from the session's folder."""
    images = session_images.ImageFiles(events_path.parent)
    return rebuild_history(read_events(events_path), images.load)


def rebuild_history(events: Iterable[Record], load_image: ImageLoader | None = None) -> History:
    """The main agent's conversation as it stood at the end of the log.

    Guard notes were never part of the conversation, so they are not rebuilt;
    tool calls left without a result (a killed process) get one saying so: a call
    whose `Tool.Called` event is there had started, and its outcome is unknown; one
    without it never ran. A `Session.Compacted` event holds the whole conversation
    after a compaction. A rewind of the conversation (`Checkpoint.Restored` with
    scope "conversation" or "both") puts it back as it was before the turn rewound
    to, or, for a rewind to a rewind's own checkpoint, as it was when that rewind
    happened. Images are read back with `load_image`; one that cannot be (or every one,
    without it) is named in the message's text instead.
    """
    state = _Rebuilding()
    turn_starts: dict[int, _Rebuilding] = {}
    rewinds: dict[str, _Rebuilding] = {}
    for event in events:
        if isinstance(event, LoopRecord | SessionCompacted) and event.agent != "main":
            continue
        if isinstance(event, ToolCalled):
            state.started.add(event.call.get("id", ""))
        elif isinstance(event, TurnStarted):
            number = int(event.turn or state.turns + 1)
            turn_starts[number] = state.saved()
            images, lost = restore_images(event.images or [], load_image)
            state.conversation.append(
                Message(role="user", content=event.prompt + lost, images=images)
            )
            state.turns, state.last_request = state.turns + 1, event.prompt
            state.live_turns = (*state.live_turns, number)
        elif isinstance(event, ModelReplied):
            state.conversation.append(Message.from_dict(event.message, load_image))
        elif isinstance(event, ToolReturned):
            images, lost = restore_images(event.images or [], load_image)
            state.conversation.append(
                Message(
                    role="tool",
                    content=event.output + lost,
                    tool_call_id=event.call_id,
                    is_error=not event.ok,
                    images=images,
                )
            )
        elif isinstance(event, TurnEnded) and event.written("text"):
            state.last_answer = event.text
        elif isinstance(event, SessionCompacted):
            # The compacted conversation replaces everything rebuilt so far.
            state.conversation = [Message.from_dict(m, load_image) for m in event.conversation]
        elif isinstance(event, CheckpointRestored):
            _rewind(state, event, turn_starts, rewinds)
    return state.history()


def _rewind(
    state: _Rebuilding,
    event: CheckpointRestored,
    turn_starts: dict[int, _Rebuilding],
    rewinds: dict[str, _Rebuilding],
) -> None:
    if event.before:
        rewinds[str(event.before)] = state.saved()
    if event.scope not in _CONVERSATION_SCOPES:
        return
    target = rewinds.get(str(event.to)) or turn_starts.get(int(event.to_turn or 0))
    if target is not None:
        state.go_back_to(target)


def turn_prompt(events: Iterable[Record], turn: int) -> str | None:
    """The prompt of the main agent's turn `turn`, as it was sent."""
    for event in events:
        if isinstance(event, TurnStarted) and event.agent == "main" and event.turn == turn:
            return event.prompt
    return None
