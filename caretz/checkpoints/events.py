"""The `Checkpoint.Created`, `Checkpoint.Settled` and `Checkpoint.Restored` records of a
checkpoint, a turn's end and a rewind.

The turn loop and a rewind write them with `EventLog.emit`; `sessions show` and a resumed
session read them back. Paths lists are capped; the counts are exact.
"""

from __future__ import annotations

from typing import Any, Literal

from caretz.checkpoints.model import CHANGED_LIMIT, Checkpoint, RestoreResult
from caretz.session.records.checkpoints import (
    CheckpointCreated,
    CheckpointRestored,
    CheckpointSettled,
)

Scope = Literal["files", "conversation", "both"]


def created_record(
    checkpoint: Checkpoint,
    project: str,
    note: str | None = None,
    duration_s: float | None = None,
) -> CheckpointCreated:
    """A snapshot was taken (kind "turn", with its `note`, or "rewind"), in `duration_s`."""
    return CheckpointCreated(
        id=checkpoint.id,
        session=checkpoint.session,
        turn=checkpoint.turn,
        kind=checkpoint.kind,
        prompt=checkpoint.prompt,
        changed=list(checkpoint.changed),
        changed_count=checkpoint.changed_count,
        left_out=list(checkpoint.left_out),
        note=note,
        project=project,
        duration_s=None if duration_s is None else round(duration_s, 3),
    )


def settled_record(settled: Checkpoint, duration_s: float | None = None) -> CheckpointSettled:
    """`Checkpoint.Settled`: the files as a turn that took a checkpoint left them were
    recorded; `changed` / `changed_count` are the files the turn changed (none: its
    checkpoint was taken, but nothing differs from it now)."""
    return CheckpointSettled(
        id=settled.id,
        checkpoint=settled.settles,
        session=settled.session,
        turn=settled.turn,
        changed=list(settled.changed),
        changed_count=settled.changed_count,
        duration_s=None if duration_s is None else round(duration_s, 3),
    )


def restored_record(
    scope: Scope,
    target: Checkpoint,
    result: RestoreResult | None = None,
    paths: list[str] | None = None,
    before: Checkpoint | None = None,
) -> CheckpointRestored:
    """A rewind of the files, the conversation, or both.

    `result` is None for a conversation-only rewind (no file was touched); `before`
    is then the checkpoint that rewind took (`CheckpointStore.mark_rewind`), if any.
    """
    where: dict[str, Any] = {
        "scope": scope,
        "to": target.id,
        "to_turn": target.turn,
        "to_session": target.session,
    }
    if result is None:
        return CheckpointRestored(**where, paths=paths, before=before.id if before else None)
    changes = [{"path": c.path, "status": c.status} for c in result.changes]
    return CheckpointRestored(
        **where,
        paths=paths,
        before=result.before.id,
        changes=changes[:CHANGED_LIMIT],
        changes_count=len(changes),
        displaced=[{"path": p, "moved_to": to} for p, to in result.displaced],
        overwritten_conflicts=[
            {"path": c.path, "reason": c.reason} for c in result.overwritten_conflicts
        ],
    )
