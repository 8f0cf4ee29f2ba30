"""The plain data of checkpoints, and how it is kept in a shadow commit's message."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from caretz.text import one_line

Kind = Literal["turn", "rewind", "settled"]
Status = Literal["added", "modified", "deleted"]

PROMPT_LIMIT = 120
# A checkpoint's message keeps at most this many changed paths; the count is always exact.
CHANGED_LIMIT = 200
META_PREFIX = "caretz-checkpoint: "


@dataclass(frozen=True)
class CheckpointMeta:
    """What the turn loop knows when it asks for a checkpoint."""

    session: str
    turn: int
    prompt: str = ""


@dataclass(frozen=True)
class FileChange:
    path: str
    status: Status


@dataclass(frozen=True, kw_only=True)
class Checkpoint:
    """One snapshot of the project's working tree, kept as a commit in the shadow repository.

    `kind` is "turn" (taken before the first change of a turn), "rewind" (taken before
    a restore, so the restore can be undone) or "settled" (the tree after caretz's last
    change of a turn or a restore; used to tell caretz's changes from other changes and
    not listed as a checkpoint of its own).
    """

    id: str
    tree: str
    session: str
    turn: int
    kind: Kind
    prompt: str
    time: float
    changed: tuple[str, ...] = ()
    changed_count: int = 0
    left_out: tuple[str, ...] = ()
    restored_to: str | None = None
    settles: str | None = None
    # Filled in when listing: the files the turn itself changed, once it has settled.
    turn_changed: tuple[str, ...] | None = field(default=None, compare=False)
    turn_changed_count: int | None = field(default=None, compare=False)

    @property
    def short_id(self) -> str:
        return self.id[:12]


@dataclass(frozen=True)
class Conflict:
    """A file a restore would overwrite that caretz did not write (or cannot tell)."""

    path: str
    reason: str


@dataclass(frozen=True)
class RestorePreview:
    """What a restore would do now: the files it would change, and which of them conflict."""

    target: Checkpoint
    changes: tuple[FileChange, ...]
    conflicts: tuple[Conflict, ...]


@dataclass(frozen=True, kw_only=True)
class RestoreResult:
    """A finished restore. `before` is the checkpoint that undoes it."""

    target: Checkpoint
    before: Checkpoint
    changes: tuple[FileChange, ...]
    displaced: tuple[tuple[str, str], ...] = ()
    overwritten_conflicts: tuple[Conflict, ...] = ()


def first_line(prompt: str) -> str:
    for line in prompt.splitlines():
        if line.strip():
            return one_line(line, PROMPT_LIMIT)
    return ""


def subject(kind: Kind, turn: int, prompt: str, restored_to: str | None) -> str:
    if kind == "rewind":
        return f"before rewinding to {(restored_to or '')[:12]}"
    if kind == "settled":
        return f"after turn {turn}"
    return f"turn {turn}: {prompt}" if prompt else f"turn {turn}"


def encode_message(cp_fields: dict[str, Any]) -> str:
    """The commit message: a readable subject, then the metadata as one JSON line."""
    head = subject(
        cp_fields["kind"], cp_fields["turn"], cp_fields["prompt"], cp_fields.get("restored_to")
    )
    return f"{head}\n\n{META_PREFIX}{json.dumps({'v': 1, **cp_fields}, ensure_ascii=False)}\n"


def decode_message(commit: str, tree: str, message: str) -> Checkpoint | None:
    """The checkpoint a shadow commit holds, or None when the message has no metadata."""
    for line in message.splitlines():
        if line.startswith(META_PREFIX):
            try:
                data = json.loads(line[len(META_PREFIX) :])
            except json.JSONDecodeError:
                return None
            return Checkpoint(
                id=commit,
                tree=tree,
                session=str(data.get("session", "")),
                turn=int(data.get("turn", 0)),
                kind=data.get("kind", "turn"),
                prompt=str(data.get("prompt", "")),
                time=float(data.get("time", 0.0)),
                changed=tuple(data.get("changed", ())),
                changed_count=int(data.get("changed_count", 0)),
                left_out=tuple(data.get("left_out", ())),
                restored_to=data.get("restored_to"),
                settles=data.get("settles"),
            )
    return None
