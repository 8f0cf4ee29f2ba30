"""Lines people read about checkpoints: what was left out, how to undo, what conflicts."""

from __future__ import annotations

from collections.abc import Sequence

from caretz.checkpoints.model import Checkpoint, Conflict
from caretz.text import shorten

NOTE_LIMIT = 300


def left_out_note(checkpoint: Checkpoint) -> str | None:
    """One line naming the files a checkpoint left out, or None when it left none out."""
    if not checkpoint.left_out:
        return None
    listed = shorten(", ".join(checkpoint.left_out), NOTE_LIMIT)
    return f"checkpoint {checkpoint.short_id} left out {len(checkpoint.left_out)}: {listed}"


def undo_command(checkpoint: Checkpoint, files_only: bool = True) -> str:
    """The command that puts the files back as they were before `checkpoint`'s turn."""
    scope = " --files-only" if files_only else ""
    return f"caretz rewind {checkpoint.session} --turn {checkpoint.turn}{scope}"


def conflict_lines(conflicts: Sequence[Conflict]) -> list[str]:
    """One line a file, for the REPL's question and the headless refusal."""
    return [f"  {conflict.path}: {conflict.reason}" for conflict in conflicts]
