"""What can go wrong with checkpoints, each as one line a person can act on."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from caretz.checkpoints.model import Conflict

GIT_MISSING = "git not found: checkpoints are off; install git"


class CheckpointError(RuntimeError):
    """A checkpoint operation failed; the message is one line."""


class GitNotFound(CheckpointError):
    """No `git` on PATH: the session goes on without checkpoints."""

    def __init__(self, refused: str | None = None) -> None:
        # `refused`: the one git on PATH is one caretz does not run (caretz/trusted.py).
        super().__init__(f"{refused}: checkpoints are off" if refused else GIT_MISSING)


class ProjectTooLarge(CheckpointError):
    """The project holds more new files than a snapshot takes at once."""


class UnknownCheckpoint(CheckpointError, LookupError):
    """No checkpoint matches the id, session or turn asked for."""


class RestoreConflict(CheckpointError):
    """A restore would overwrite files that changed outside caretz since the checkpoint."""

    def __init__(self, conflicts: Sequence[Conflict]):
        self.conflicts = list(conflicts)
        paths = ", ".join(c.path for c in self.conflicts[:5])
        more = f" and {len(self.conflicts) - 5} more" if len(self.conflicts) > 5 else ""
        super().__init__(
            f"{len(self.conflicts)} file(s) changed outside caretz since the checkpoint "
            f"would be overwritten: {paths}{more} (confirm, or use --force)"
        )


class RestoreFailed(CheckpointError):
    """A restore stopped half-way. `rolled_back`: every file is back as it was before it."""

    def __init__(self, message: str, rolled_back: bool):
        super().__init__(message)
        self.rolled_back = rolled_back
