"""Checkpoints: snapshots of the project's working tree in a shadow git repository.

`CheckpointStore.open(data_dir, project)` is the entry point; see docs/checkpoints.md.

The names below are loaded from their modules when first asked for: a run reaches its
first model request needing only `project.project_root` from here, and the store, the
snapshots and git's plumbing load when the first change is about to be made.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_HOMES = {
    "errors": (
        "GIT_MISSING",
        "CheckpointError",
        "GitNotFound",
        "ProjectTooLarge",
        "RestoreConflict",
        "RestoreFailed",
        "UnknownCheckpoint",
    ),
    "model": (
        "Checkpoint",
        "CheckpointMeta",
        "Conflict",
        "FileChange",
        "RestorePreview",
        "RestoreResult",
    ),
    "snapshot": ("SnapshotLimits",),
    "store": ("CheckpointStore",),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}

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


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
