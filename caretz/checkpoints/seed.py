"""A new shadow index started from the project's own git index, and the blobs it borrows.

The project's index lists every file its git tracks with that file's stat data and the
blob it holds. A copy of it (its mtime kept: git's check for files changed in the same
second as the index was written reads it) tells the shadow which files are unchanged
without reading them, so a project's first snapshot hashes only the files that differ
from the index and the untracked ones: it costs what the working tree's changes cost,
not what the tree weighs. The blobs of the unchanged files stay where they are, in the
project's object store, which the shadow names in `info/borrowed` and reads only for a
blob's bytes (checkpoints/git.py).

A borrowed blob is needed only once its file changes: a restore writes back the files
that differ from a checkpoint. So before an entry of the shadow index is replaced (the
snapshot that sees its file changed, deleted, or over the size cap), its blob is copied
into the shadow's own store (`secure`). What stays borrowed is the blob of a file that
is still as the checkpoint holds it. A restore checks every blob it writes against its
name, so a blob the project's store no longer holds, or holds with other bytes, fails
the restore (and it is undone) rather than writing something else.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from caretz import private_data
from caretz.checkpoints.git import INDEX_REF, ShadowGit
from caretz.sandbox.door import read_beneath_stat

GITLINK = b"160000"
# A project's index larger than this is not copied (a million files' is about 100 MB).
INDEX_LIMIT = 512 * 1024 * 1024
# Up to this many paths are named to `git ls-files`; more, and the whole index is read.
PATHSPEC_LIMIT = 200


def _listing(paths: Sequence[str]) -> bytes:
    return b"".join(os.fsencode(path) + b"\0" for path in paths)


def seed_index(git: ShadowGit, source: Path, objects: Path) -> list[str] | None:
    """Makes a copy of the project's index `source` the shadow's index, borrowing from
    the object store `objects`. Returns the unmerged paths taken out of it (to be staged
    from the working tree), or None when it cannot be used (there is none; a format this
    git does not read on its own: a split or sparse index, another hash) and nothing
    changed. Gitlinks are taken out (a nested repository is left out, with a note);
    "assume unchanged" and "skip worktree" bits are cleared, so every file is looked at."""
    if git.index.exists() or not objects.is_dir():
        return None
    seed = git.index.with_name(git.index.name + ".seed")
    if not _copy_index(source, seed):
        return None
    env = {"GIT_INDEX_FILE": str(seed)}
    try:
        done = git.call("ls-files", "-s", "-v", "-z", env=env)
        if done.returncode != 0:
            return None
        unmerged, dropped, assumed, skipped = _read_entries(done.stdout)
        for flag, paths in (
            ("--force-remove", [*dropped, *unmerged]),
            ("--no-assume-unchanged", assumed),
            ("--no-skip-worktree", skipped),
        ):
            if paths:
                done = git.call(
                    "update-index", "-z", flag, "--stdin", input=_listing(paths), env=env
                )
                if done.returncode != 0:
                    return None
        private_data.write_file(git.borrowed_marker, str(objects) + "\n")
        os.replace(seed, git.index)  # both in the shadow repository, made by private_data
        _name_index_tree(git, _adopt_trees(git))
        return list(dict.fromkeys(unmerged))
    finally:
        seed.unlink(missing_ok=True)


def _name_index_tree(git: ShadowGit, root: str | None) -> None:
    """Points the shadow's HEAD (INDEX_REF) at a commit of the seeded index's tree, so the
    first scan compares the index with it and finds nothing (checkpoints/scan.py)."""
    if root is None:
        return
    done = git.call("commit-tree", root, input=b"caretz: the project's index\n")
    if done.returncode == 0:
        git.call("update-ref", INDEX_REF, done.stdout.decode().strip())


def _adopt_trees(git: ShadowGit) -> str | None:
    """Copies the trees the seeded index names (its cache of the tree of each folder) into
    the shadow's own store, as one pack: every tree is read by every comparison, and a
    pack made from the project's reuses its compressed data (a few MB for the Linux
    source, where writing them one file each took seconds). Should a step fail, the next
    `write-tree` writes them itself. Returns the index's tree (None if unknown)."""
    done = git.call("write-tree", "--missing-ok", borrow=True)
    root = done.stdout.decode().strip()
    if done.returncode != 0 or not root:
        return None
    done = git.call("ls-tree", "-r", "-d", "-z", root, borrow=True)
    if done.returncode != 0:
        return None
    trees = [root] + [
        entry.split(b"\t", 1)[0].split()[2].decode() for entry in _entries(done.stdout)
    ]
    if _own_store_empty(git):  # a new shadow: every tree is missing, no need to ask
        missing = trees
    else:
        missing = [sha for sha, kind, _ in _check(git, trees, borrow=False) if kind == "missing"]
    if missing:
        lines = "".join(f"{sha}\n" for sha in missing).encode()
        git.call("pack-objects", "-q", str(_pack_base(git)), input=lines, borrow=True)
    return root


def _own_store_empty(git: ShadowGit) -> bool:
    """Whether the shadow's own object store holds nothing yet (no pack, no loose object)."""
    objects = git.git_dir / "objects"
    loose = (entry for entry in objects.glob("??") if entry.is_dir() and any(entry.iterdir()))
    return not any(objects.glob("pack/*.pack")) and next(loose, None) is None


def _entries(raw: bytes) -> list[bytes]:
    return [entry for entry in raw.split(b"\0") if b"\t" in entry]


def _pack_base(git: ShadowGit) -> Path:
    return git.git_dir / "objects" / "pack" / "pack"


def _copy_index(source: Path, seed: Path) -> bool:
    """Copies the project's index, its mtime kept. Only a regular file (not a link: a
    command may have put one there) of at most INDEX_LIMIT bytes; False otherwise."""
    try:  # through the door: no symlink below the git dir, a regular file, bounded
        data, info = read_beneath_stat(source.parent, source.name, INDEX_LIMIT)
    except OSError:
        return False
    if len(data) != info.st_size:
        return False  # changed while read
    private_data.write_file(seed, data)
    os.utime(seed, ns=(info.st_atime_ns, info.st_mtime_ns))
    return True


def _read_entries(raw: bytes) -> tuple[list[str], list[str], list[str], list[str]]:
    """`ls-files -s -v -z` lines as (unmerged, gitlinks, assumed unchanged, skip-worktree)."""
    unmerged: list[str] = []
    dropped: list[str] = []
    assumed: list[str] = []
    skipped: list[str] = []
    for entry in raw.split(b"\0"):
        if b"\t" not in entry:
            continue
        meta, raw_path = entry.split(b"\t", 1)
        tag, mode, _sha, stage = meta.split(b" ")
        path = os.fsdecode(raw_path)
        if mode == GITLINK:
            dropped.append(path)
        elif stage != b"0":
            unmerged.append(path)
        else:
            if tag.islower():
                assumed.append(path)
            if tag.upper() == b"S":
                skipped.append(path)
    return unmerged, dropped, assumed, skipped


def secure(git: ShadowGit, paths: Sequence[str], size_cap: int) -> None:
    """Copies into the shadow's own store the borrowed blobs its index holds for `paths`,
    before those entries change. Blobs over `size_cap` stay borrowed (as such a file is
    left out of snapshots once it changes), and a blob the project's store no longer
    has cannot be copied: a restore that needs it says so."""
    if git.borrowed is None:
        return
    secure_blobs(
        git, _index_blobs(git, [path for path in paths if not path.endswith("/")]), size_cap
    )


def secure_blobs(git: ShadowGit, shas: Sequence[str], size_cap: int) -> None:
    """`secure` for blobs already known (a scan names the one each changed entry holds)."""
    if git.borrowed is None or not shas:
        return
    borrowed = [sha for sha, kind, _size in _check(git, shas, borrow=False) if kind == "missing"]
    if not borrowed:
        return
    found = _check(git, borrowed, borrow=True)
    wanted = [sha for sha, kind, size in found if kind == "blob" and size <= size_cap]
    pack = str(_pack_base(git))
    lines = "".join(f"{sha}\n" for sha in wanted).encode()
    if wanted and git.call("pack-objects", "-q", pack, input=lines, borrow=True).returncode:
        for sha in wanted:  # one it cannot read stops the run: the others, one by one
            git.call("pack-objects", "-q", pack, input=f"{sha}\n".encode(), borrow=True)


def _index_blobs(git: ShadowGit, paths: Sequence[str]) -> list[str]:
    """The blobs the shadow index holds for `paths` (those it holds)."""
    if not paths:
        return []
    if len(paths) <= PATHSPEC_LIMIT:
        raw = git.run("ls-files", "-s", "-z", "--", *paths)
        wanted = None
    else:
        raw = git.run("ls-files", "-s", "-z")
        wanted = {os.fsencode(path) for path in paths}
    shas = []
    for entry in raw.split(b"\0"):
        if b"\t" not in entry:
            continue
        meta, path = entry.split(b"\t", 1)
        mode, sha, _stage = meta.split(b" ")
        if mode != GITLINK and (wanted is None or path in wanted):
            shas.append(sha.decode())
    return list(dict.fromkeys(shas))


def _check(git: ShadowGit, shas: Sequence[str], borrow: bool) -> list[tuple[str, str, int]]:
    """(sha, type or "missing", size) for each object, in the shadow's own store or,
    with `borrow`, in the borrowed one too."""
    lines = "".join(f"{sha}\n" for sha in shas).encode()
    raw = git.run("cat-file", "--batch-check", input=lines, borrow=borrow)
    found = []
    for line in raw.decode(errors="replace").splitlines():
        parts = line.split()
        if len(parts) == 3:
            found.append((parts[0], parts[1], int(parts[2])))
        elif len(parts) == 2:
            found.append((parts[0], parts[1], 0))
    return found
