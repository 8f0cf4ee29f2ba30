"""Which files a restore would overwrite that changed outside caretz since the checkpoint.

A session's shadow history alternates: a checkpoint before a turn's first change
(or before a restore), then the "settled" state after caretz's last change of that
turn. What changed from a checkpoint to its settled state is caretz's own work;
what changed from a settled state to the next checkpoint, or to the working tree
now, was done by someone else (the user, an editor, another session). Where a
checkpoint has no settled state after it (a killed process), caretz cannot tell who
changed what, and says so rather than guess.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from caretz.checkpoints.model import Checkpoint, Conflict

OUTSIDE = "changed outside caretz since the checkpoint"
UNKNOWN = "changed since the checkpoint, and caretz cannot tell whether it did it"
NOT_SAVED = "not in any checkpoint (ignored or over the size cap); it will be moved to {folder}"

DiffNames = Callable[[str, str], set[str]]


def changed_by_others(
    chain: Sequence[Checkpoint], target: Checkpoint, now_tree: str, diff_names: DiffNames
) -> tuple[set[str], set[str]]:
    """(paths changed outside caretz, paths changed by someone caretz cannot tell) since
    `target`, over the session's `chain` (oldest first) and the tree as it is now."""
    ids = [cp.id for cp in chain]
    later = list(chain[ids.index(target.id) :]) if target.id in ids else [target]
    outside: set[str] = set()
    unknown: set[str] = set()
    for before, after in zip(later, later[1:], strict=False):
        if after.kind == "settled":
            continue  # a checkpoint to its settled state: caretz's own changes
        names = diff_names(before.tree, after.tree)
        (outside if before.kind == "settled" else unknown).update(names)
    last = later[-1]
    (outside if last.kind == "settled" else unknown).update(diff_names(last.tree, now_tree))
    return outside, unknown - outside


def find_conflicts(
    would_change: Collection[str],
    outside: set[str],
    unknown: set[str],
    caretz_paths: Collection[str] = (),
    unsaved: Collection[str] = (),
    displaced_folder: str = "",
) -> list[Conflict]:
    """The conflicts among the paths a restore would change.

    `caretz_paths` are files the caller knows caretz itself wrote (from its tool
    log); they clear an "unknown" but never an "outside" finding. `unsaved` are
    paths the restore would replace that no snapshot holds.
    """
    mine = set(caretz_paths)
    conflicts = [Conflict(path, OUTSIDE) for path in sorted(outside.intersection(would_change))]
    unclear = (unknown - mine).intersection(would_change)
    conflicts += [Conflict(path, UNKNOWN) for path in sorted(unclear)]
    note = NOT_SAVED.format(folder=displaced_folder)
    conflicts += [Conflict(path, note) for path in sorted(set(unsaved) - outside - unclear)]
    return conflicts
