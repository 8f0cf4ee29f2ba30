"""The fields of the `Checkpoint.Created`, `Checkpoint.Settled` and `Checkpoint.Restored`
session events.

The turn loop writes them with `EventLog.emit(type, **fields)`; `sessions show` and
a resumed session read them back. Paths lists are capped; the counts are exact.
"""

from __future__ import annotations

from typing import Any, Literal

from caretz.checkpoints.model import CHANGED_LIMIT, Checkpoint, RestoreResult

CREATED = "Checkpoint.Created"
RESTORED = "Checkpoint.Restored"
FAILED = "Checkpoint.Failed"  # a checkpoint could not be taken: {stage, message}
SETTLED = "Checkpoint.Settled"  # a turn that took a checkpoint ended: what it changed
Scope = Literal["files", "conversation", "both"]


def created_fields(checkpoint: Checkpoint) -> dict[str, Any]:
    """`Checkpoint.Created`: a snapshot was taken (kind "turn" or "rewind")."""
    return {
        "id": checkpoint.id,
        "session": checkpoint.session,
        "turn": checkpoint.turn,
        "kind": checkpoint.kind,
        "prompt": checkpoint.prompt,
        "changed": list(checkpoint.changed),
        "changed_count": checkpoint.changed_count,
        "left_out": list(checkpoint.left_out),
    }


def settled_fields(settled: Checkpoint) -> dict[str, Any]:
    """`Checkpoint.Settled`: the files as a turn that took a checkpoint left them were
    recorded; `changed` / `changed_count` are the files the turn changed (none: its
    checkpoint was taken, but nothing differs from it now)."""
    return {
        "id": settled.id,
        "checkpoint": settled.settles,
        "session": settled.session,
        "turn": settled.turn,
        "changed": list(settled.changed),
        "changed_count": settled.changed_count,
    }


def restored_fields(
    scope: Scope,
    target: Checkpoint,
    result: RestoreResult | None = None,
    paths: list[str] | None = None,
    before: Checkpoint | None = None,
) -> dict[str, Any]:
    """`Checkpoint.Restored`: a rewind of the files, the conversation, or both.

    `result` is None for a conversation-only rewind (no file was touched); `before`
    is then the checkpoint that rewind took (`CheckpointStore.mark_rewind`), if any.
    """
    fields: dict[str, Any] = {
        "scope": scope,
        "to": target.id,
        "to_turn": target.turn,
        "to_session": target.session,
        "paths": paths,
    }
    if result is None:
        return fields if before is None else {**fields, "before": before.id}
    changes = [{"path": c.path, "status": c.status} for c in result.changes]
    return {
        **fields,
        "before": result.before.id,
        "changes": changes[:CHANGED_LIMIT],
        "changes_count": len(changes),
        "displaced": [{"path": p, "moved_to": to} for p, to in result.displaced],
        "overwritten_conflicts": [
            {"path": c.path, "reason": c.reason} for c in result.overwritten_conflicts
        ],
    }
