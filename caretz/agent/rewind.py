"""Rewinding a session: its files, its conversation, or both, back to a checkpoint.

The interactive session's /rewind and /undo and the `caretz rewind` command all
come here. Every rewind first takes a checkpoint of its own (the files as they are),
so it can be undone; the session log gets `Checkpoint.Created` for that one and
`Checkpoint.Restored` for the rewind, and the conversation is read back from the
log (`rebuild_history` honours the rewind), so a resumed session carries on from
the rewound conversation just as the live one does.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from caretz.checkpoints import (
    Checkpoint,
    CheckpointMeta,
    CheckpointStore,
    RestorePreview,
    RestoreResult,
    UnknownCheckpoint,
)
from caretz.checkpoints.events import Scope, created_record, restored_record
from caretz.session.events import EventLog, read_events
from caretz.session.images import ImageFiles
from caretz.session.records.base import Record
from caretz.session.records.checkpoints import CheckpointRestored
from caretz.session.records.loop import ToolReturned, TurnStarted
from caretz.session.store import History, rebuild_history, turn_prompt

FILE_SCOPES: tuple[Scope, ...] = ("files", "both")
CONVERSATION_SCOPES: tuple[Scope, ...] = ("conversation", "both")


@dataclass(frozen=True, kw_only=True)
class Rewound:
    """A finished rewind. `before` is the checkpoint that undoes it."""

    target: Checkpoint
    scope: Scope
    before: Checkpoint
    files: RestoreResult | None  # None: the files were left as they were
    history: History | None  # the conversation now, when it was rewound
    prompt: str | None  # the prompt of the turn rewound to, to offer it again


class SessionRewind:
    """Rewinds one session of one project; `log` is the session's log, open for writing."""

    def __init__(self, store: CheckpointStore, session: str, log: EventLog, workspace: Path):
        if log.path is None:
            raise ValueError("a rewind needs the session's log file")
        self.store = store
        self.session = session
        self.log = log
        self.events_path = log.path
        self.workspace = workspace

    def events(self) -> list[Record]:
        return list(read_events(self.events_path))

    def checkpoints(self) -> list[Checkpoint]:
        """The session's checkpoints, oldest first: turns and rewinds."""
        return self.store.list(self.session)

    def for_turn(self, turn: int) -> Checkpoint:
        return self.store.for_turn(self.session, turn)

    def by_id(self, ref: str) -> Checkpoint:
        return self.store.get(ref, session=self.session)

    def last_turn(self) -> Checkpoint:
        """For /undo: the checkpoint of the newest turn that changed files and is still
        in the conversation (a turn already rewound away is skipped)."""
        live = set(rebuild_history(self.events()).live_turns)
        turns = [cp for cp in self.checkpoints() if cp.kind == "turn" and cp.turn in live]
        if not turns:
            raise UnknownCheckpoint("nothing to undo: no turn in the conversation changed files")
        return turns[-1]

    def undo_target(self) -> tuple[Checkpoint, Scope]:
        """For /undo: a rewind made since the last turn began is undone, to its own
        checkpoint and in its own scope (files and conversation exactly as before it);
        else the newest turn still in the conversation that changed files, both."""
        for event in reversed(self.events()):
            if isinstance(event, TurnStarted) and event.agent == "main":
                break
            if isinstance(event, CheckpointRestored) and event.before:
                return self.by_id(str(event.before)), cast(Scope, event.scope or "both")
        return self.last_turn(), "both"

    def preview(self, target: Checkpoint) -> RestorePreview:
        """What restoring the files would change, and which of those changed outside caretz."""
        return self.store.preview(target, caretz_paths=self.caretz_paths())

    def caretz_paths(self) -> list[str]:
        """Files caretz's own tools wrote in this session (absolute), from its log."""
        paths = []
        for event in self.events():
            if isinstance(event, ToolReturned):
                paths += [str(self.workspace / path) for path in event.files_changed or ()]
        return paths

    def rewind(
        self,
        target: Checkpoint,
        scope: Scope,
        *,
        force: bool = False,
        allowed: Collection[str] = (),
    ) -> Rewound:
        """Rewinds to `target`. Raises RestoreConflict (files changed outside caretz that
        are neither `allowed` nor `force`d), RestoreFailed (every file put back)."""
        history = rebuild_history(self.events())
        meta = CheckpointMeta(self.session, history.turns, f"rewind to turn {target.turn}")
        result: RestoreResult | None = None
        if scope in FILE_SCOPES:
            result = self.store.restore(
                target, meta, force=force, allowed=allowed, caretz_paths=self.caretz_paths()
            )
            before = result.before
        else:
            before = self.store.mark_rewind(target, meta)
        self.log.emit(created_record(before, str(self.store.project)))
        self.log.emit(restored_record(scope, target, result, before=before))
        if scope not in CONVERSATION_SCOPES:
            return Rewound(
                target=target, scope=scope, before=before, files=result, history=None, prompt=None
            )
        events = self.events()
        prompt = turn_prompt(events, target.turn) if target.kind == "turn" else None
        history = rebuild_history(events, ImageFiles(self.events_path.parent).load)
        return Rewound(
            target=target, scope=scope, before=before, files=result, history=history, prompt=prompt
        )
