"""The checkpoints' records: one taken, a rewind, one that failed, a long one under way.

`checkpoints/events.py` builds the first two from a checkpoint and a restore. Paths lists
are capped; the counts are exact.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, ClassVar

from caretz.session.records.base import CheckpointRecord, optional, record

JsonDict = dict[str, Any]


@record
class CheckpointCreated(CheckpointRecord):
    """A snapshot was taken: before a turn's first change (kind "turn"), or by a rewind
    (kind "rewind"), whose record has no `note`."""

    TYPE: ClassVar[str] = "Checkpoint.Created"
    id: str = ""
    session: str = ""
    turn: int = 0
    kind: str = ""
    prompt: str = ""
    changed: list[str] = field(default_factory=list)
    changed_count: int = 0
    left_out: list[str] = field(default_factory=list)
    note: str | None = None  # the line naming what was left out, if anything was
    project: str = ""
    duration_s: float | None = optional()  # what taking it cost (the tool call's time is apart)

    def omits(self, name: str) -> bool:
        return name == "note" and self.kind == "rewind"


@record
class CheckpointRestored(CheckpointRecord):
    """A rewind of the files, the conversation, or both. A files rewind records what it
    changed; `before` is the checkpoint that undoes it."""

    TYPE: ClassVar[str] = "Checkpoint.Restored"
    scope: str = "both"  # "files", "conversation" or "both"
    to: str = ""
    to_turn: int = 0
    to_session: str = ""
    paths: list[str] | None = None
    before: str | None = optional()
    changes: list[JsonDict] | None = optional()
    changes_count: int | None = optional()
    displaced: list[JsonDict] | None = optional()
    overwritten_conflicts: list[JsonDict] | None = optional()


@record
class CheckpointSettled(CheckpointRecord):
    """A turn that took a checkpoint ended: the files as it left them were recorded;
    `changed` / `changed_count` are the files it changed (none: nothing differs now)."""

    TYPE: ClassVar[str] = "Checkpoint.Settled"
    id: str = ""
    checkpoint: str | None = None
    session: str = ""
    turn: int | None = None
    changed: list[str] = field(default_factory=list)
    changed_count: int = 0
    duration_s: float | None = optional()


@record
class CheckpointSaving(CheckpointRecord):
    """A snapshot that hashes many files has begun (a project's first, with no git
    index of its own to start from): `message` is the line shown while it runs."""

    TYPE: ClassVar[str] = "Checkpoint.Saving"
    stage: str = ""  # "checkpoint", or "prepare" when the background staging is waited for
    files: int = 0
    bytes: int = 0
    message: str = ""


@record
class CheckpointFailed(CheckpointRecord):
    """A checkpoint could not be taken or settled; `off`: checkpoints are off for the
    rest of the session."""

    TYPE: ClassVar[str] = "Checkpoint.Failed"
    stage: str = ""
    message: str = ""
    off: bool | None = optional()
