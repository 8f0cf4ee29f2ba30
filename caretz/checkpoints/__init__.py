"""Checkpoints: snapshots of the project's working tree in a shadow git repository.

`CheckpointStore.open(data_dir, project)` is the entry point; see docs/checkpoints.md.
"""

from caretz.checkpoints.errors import (
    GIT_MISSING,
    CheckpointError,
    GitNotFound,
    ProjectTooLarge,
    RestoreConflict,
    RestoreFailed,
    UnknownCheckpoint,
)
from caretz.checkpoints.model import (
    Checkpoint,
    CheckpointMeta,
    Conflict,
    FileChange,
    RestorePreview,
    RestoreResult,
)
from caretz.checkpoints.snapshot import SnapshotLimits
from caretz.checkpoints.store import CheckpointStore

__all__ = [
    "GIT_MISSING",
    "Checkpoint",
    "CheckpointError",
    "CheckpointMeta",
    "CheckpointStore",
    "Conflict",
    "FileChange",
    "GitNotFound",
    "ProjectTooLarge",
    "RestoreConflict",
    "RestoreFailed",
    "RestorePreview",
    "RestoreResult",
    "SnapshotLimits",
    "UnknownCheckpoint",
]
