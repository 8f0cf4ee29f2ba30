"""Lines people read about checkpoints: what was left out, how to undo, what conflicts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from caretz.text import shorten

if TYPE_CHECKING:
    from caretz.checkpoints.model import Checkpoint, Conflict

NOTE_LIMIT = 300
# How `caretz rewind` is told each scope of a rewind.
SCOPE_FLAGS = {"files": "--files-only", "conversation": "--conversation-only", "both": ""}


def left_out_note(checkpoint: Checkpoint) -> str | None:
    """One line naming the files a checkpoint left out, or None when it left none out."""
    if not checkpoint.left_out:
        return None
    listed = shorten(", ".join(checkpoint.left_out), NOTE_LIMIT)
    return f"checkpoint {checkpoint.short_id} left out {len(checkpoint.left_out)}: {listed}"


def saving_line(files: int, size: int) -> str:
    """The line shown while a snapshot that hashes many files runs."""
    megabytes = size / (1024 * 1024)
    return (
        f"checkpoint: saving {files:,} files ({megabytes:,.1f} MB) before the first change; "
        "later checkpoints save only what changed"
    )


def rewind_command(session: str, turn: int, files_only: bool = True) -> str:
    """`caretz rewind` back to before turn `turn` of `session` (its files only, by default)."""
    scope = " --files-only" if files_only else ""
    return f"caretz rewind {session} --turn {turn}{scope}"


def checkpoint_command(session: str, checkpoint_id: str, scope: str = "") -> str:
    """`caretz rewind` back to one checkpoint by its id: how a rewind is undone (its
    own checkpoint, taken first). `scope` is "", "--files-only" or "--conversation-only"."""
    return f"caretz rewind {session} --checkpoint {checkpoint_id[:12]} {scope}".rstrip()


def conflict_lines(conflicts: Sequence[Conflict]) -> list[str]:
    """One line a file, for the REPL's question and the headless refusal."""
    return [f"  {conflict.path}: {conflict.reason}" for conflict in conflicts]
