"""What differs between the shadow index and the working tree: one `git status` run.

Two caches in the shadow index make that cost an `lstat` of each tracked file and of
each folder, not a read of every folder with its ignore rules: each entry's stat data,
and git's untracked cache (each folder's stat data, ignore files and untracked names).
git uses the untracked cache in `git status` only, over the whole tree, and only when
`status.showUntrackedFiles` is what the run asks for (`all`: checkpoints/git.py sets
it); `ls-files -o` reads every folder every time. The run also brings stale stat data up
to date (a file touched but not changed is hashed once, then known unchanged) and writes
both caches back.

The shadow's HEAD names the commit of the tree its index held when last recorded
(`INDEX_REF`), so status's comparison of the index with HEAD is a walk of the index's
cached trees that finds nothing; when status reports nothing at all, that commit's tree
is the snapshot without a `write-tree`.

`paths` narrows a scan to files caretz's own tools wrote: then git looks at those alone.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from caretz.checkpoints.git import ShadowGit

# More paths than this and the whole tree is scanned (a command line has its limits).
PATHS_LIMIT = 200


@dataclass(frozen=True)
class StatusEntry:
    """A path whose working-tree state differs from the shadow index."""

    path: str
    untracked: bool = False
    blob: str | None = None  # the blob the shadow index holds for it (a tracked file)


@dataclass
class Scan:
    changed: list[StatusEntry] = field(default_factory=list)
    # The index differs from HEAD's tree (a snapshot not recorded, a new shadow): the
    # snapshot's tree has to be written from the index.
    index_moved: bool = False


def scan(git: ShadowGit, paths: Sequence[str] | None = None) -> Scan:
    """The paths that differ (every one, or those among `paths`); raises CheckpointError."""
    if paths is not None and not paths:
        return Scan()  # nothing to look at (git would take no pathspec for all of them)
    args = ["status", "--porcelain=v2", "-z", "--untracked-files=all", "--no-renames"]
    args.append("--ignore-submodules=all")  # never runs git in a nested repository
    if paths is not None:
        args += ["--", *paths]
    return parse(git.run(*args))


def parse(raw: bytes) -> Scan:
    """`git status --porcelain=v2 -z --no-renames` output as a Scan."""
    found = Scan()
    items = iter(raw.split(b"\0"))
    for item in items:
        kind = item[:2]
        if kind == b"1 ":  # 1 XY sub mH mI mW hH hI path
            fields = item.split(b" ", 8)
            staged, unstaged = fields[1][:1], fields[1][1:2]
            found.index_moved |= staged != b"."
            if unstaged != b".":
                found.changed.append(StatusEntry(os.fsdecode(fields[8]), blob=fields[7].decode()))
        elif kind == b"2 ":  # a rename (not asked for): its two paths, both looked at
            fields = item.split(b" ", 9)
            found.index_moved = True
            original = next(items, b"")
            for path in (fields[9], original) if original else (fields[9],):
                found.changed.append(StatusEntry(os.fsdecode(path)))
        elif kind == b"u ":  # u XY sub m1 m2 m3 mW h1 h2 h3 path
            found.index_moved = True
            found.changed.append(StatusEntry(os.fsdecode(item.split(b" ", 10)[10])))
        elif kind == b"? ":
            found.changed.append(StatusEntry(os.fsdecode(item[2:]), untracked=True))
    return found
