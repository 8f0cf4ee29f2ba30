"""Staging the project's working tree into the shadow index and writing it as a tree.

The shadow index keeps each file's stat data and git's untracked cache, so a later
snapshot hashes only what changed since the last one: one `git status` finds the
candidates (checkpoints/scan.py), and when there are none the tree the index held when
last recorded is the snapshot, with no `git add` or `write-tree` at all. When caretz
knows the only files that changed (its own file tools wrote them), status looks at those.

What a session's snapshots cover is settled by its first one: every file the project's
git tracks, and the untracked files its ignore rules (as they are then) let in. The
exclude list is computed then and kept; a file the shadow index holds stays in the
later snapshots whatever ignore rules are written meanwhile (a command writing `*` to
`.git/info/exclude` or `.gitignore` must not empty the next checkpoint). New files are
judged by the `.gitignore` files as they are.

A project's first snapshot into a new shadow starts from the project's own git index
when there is one (checkpoints/seed.py): only the files that differ from it, and the
untracked ones, are hashed.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from caretz import private_data
from caretz.checkpoints.errors import CheckpointError, ProjectTooLarge
from caretz.checkpoints.git import ShadowGit, last_line
from caretz.checkpoints.project import ProjectGit, project_git
from caretz.checkpoints.scan import PATHS_LIMIT, Scan, scan
from caretz.checkpoints.seed import secure, secure_blobs, seed_index
from caretz.checkpoints.watch import ChangeFeed
from caretz.sandbox.door import ProjectDoor

DEFAULT_SIZE_CAP = 5 * 1024 * 1024
IGNORE_MAX_BYTES = 4 << 20  # an ignore file larger than this is not read
# Above this many files to hash, `git add` streams them into one pack (one file on
# disk instead of one per object) and the trees are built by `git fast-import`.
BULK_THRESHOLD = 500
# Streaming each file into the pack allocates and frees a deflate buffer per file;
# glibc's default trimming returns that memory every time (a brk call per file and
# about half of a first snapshot's time). Keeping 64 MB of slack avoids it; other C
# libraries ignore the variable.
BULK_MALLOC = "glibc.malloc.top_pad=67108864:glibc.malloc.trim_threshold=134217728"
_UNREADABLE = re.compile(r"""^error: (?:open\("(.+)"\)|unable to index file '(.+)')""", re.M)
_SPECIAL = re.compile(r"([\\*?\[\]!# ])")
# Told (files, bytes) before a snapshot that takes more than a moment begins.
Progress = Callable[[int, int], None]


@dataclass(frozen=True, kw_only=True)
class SnapshotLimits:
    """What a snapshot takes: files up to `size_cap` bytes each; and a project with more
    than `max_files` new files or `max_bytes` of them at once (caretz started in a home
    folder, say, or a kernel-size tree that is not a git repository) is refused rather
    than copied: about 10 s of hashing and a quarter of its size on disk at most. (In a
    repository only what differs from its index counts.)"""

    size_cap: int = DEFAULT_SIZE_CAP
    max_files: int = 50_000
    max_bytes: int = 256 * 1024 * 1024
    # A snapshot that hashes this many files or bytes is announced (`Progress`): it takes
    # a second or more on two cores.
    notice_files: int = 5_000
    notice_bytes: int = 64 * 1024 * 1024


DEFAULT_LIMITS = SnapshotLimits()


@dataclass(frozen=True)
class Snapshot:
    tree: str
    # Paths left out, each with why: "big.bin (7.3 MB)", "vendor/lib/ (nested git repository)".
    left_out: tuple[str, ...]


def literal_pattern(path: str) -> str:
    """A gitignore line matching exactly `path` from the work tree's root."""
    escaped = _SPECIAL.sub(r"\\\1", path).replace("\n", "?")
    return "/" + escaped


def project_exclude_file(project: Path) -> Path | None:
    """The project's own `info/exclude`, also for a linked worktree (`.git` is a file)."""
    found = project_git(project)
    return found.exclude_file if found is not None else None


def user_exclude_file(git: str) -> Path | None:
    """The user's global ignore file (core.excludesFile, else ~/.config/git/ignore)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    # From `/`: git looks for a repository where it runs, and the project's is not read.
    done = subprocess.run(
        [git, "config", "--global", "--path", "--get", "core.excludesFile"],
        capture_output=True,
        cwd="/",
        env={**env, "GIT_CEILING_DIRECTORIES": "/"},
    )
    configured = os.fsdecode(done.stdout).strip()
    if configured:
        return Path(configured).expanduser()
    config_home = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config_home) / "git" / "ignore"


def project_tracked(git: str, project: Path) -> list[str]:
    """The files the project's own git tracks (no gitlinks), read from its index by git
    with no system or global config and no fsmonitor; [] when it is not a repository."""
    dot_git = project / ".git"
    if not os.path.lexists(dot_git):
        return []
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_DIR=str(dot_git), GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    done = subprocess.run(
        [git, "-c", "core.fsmonitor=false", "ls-files", "-s", "-z"],
        capture_output=True,
        cwd=project,
        env=env,
    )
    if done.returncode != 0:
        return []
    found: list[str] = []
    for entry in done.stdout.split(b"\0"):
        if b"\t" in entry and not entry.startswith(b"160000 "):
            found.append(os.fsdecode(entry.split(b"\t", 1)[1]))
    return list(dict.fromkeys(found))


def _read(path: Path | None) -> str:
    """A git ignore file's text ("" when there is none or it cannot be read), through the
    door for files outside the project (sandbox/door.py): a linked worktree's git dir and
    the user's global ignore file lie elsewhere; only a regular file is read, bounded. Its
    text decides what a checkpoint leaves out, nothing more."""
    if path is None:
        return ""
    try:
        return ProjectDoor.users_own().text(path, IGNORE_MAX_BYTES, "surrogateescape")
    except OSError:
        return ""


def _split_z(raw: bytes) -> list[str]:
    return [os.fsdecode(item) for item in raw.split(b"\0") if item]


def _human_size(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB"


class Stager:
    """Takes snapshots of one project into its shadow repository."""

    def __init__(
        self,
        git: ShadowGit,
        limits: SnapshotLimits = DEFAULT_LIMITS,
        excluded_dirs: Sequence[Path] = (),
        user_excludes: Path | None = None,
        tracked: Callable[[], list[str]] = list,
        project_git: ProjectGit | None = None,
        watch: bool = True,
    ):
        self.git = git
        self.project = git.work_tree
        self.limits = limits
        self.excluded_dirs = excluded_dirs
        self.user_excludes = user_excludes
        self.tracked = tracked  # the files the project's git tracks
        self.project_git = project_git  # its index seeds a new shadow index
        self._large_list = git.git_dir / "info" / "left-out"
        self._excludes: str | None = None  # the exclude list, as of the first snapshot
        # The paths a command changed, from inotify watches (watch.py): a hint that narrows
        # the scan when it can vouch for the whole interval since the last one.
        skip = [self.project / ".git", *excluded_dirs]
        self.feed = ChangeFeed(self.project, git.index, skip, PATHS_LIMIT) if watch else None
        self._last_tree: str | None = None  # the tree the index held after the last snapshot
        self._notes: dict[str, str] = {}  # what the snapshots leave out, by path

    def close(self) -> None:
        """Gives back the watches (watch.py); a later snapshot looks at the whole tree."""
        if self.feed is not None:
            self.feed.close()

    def snapshot(
        self,
        on_progress: Progress | None = None,
        paths: Sequence[str] | None = None,
        *,
        whole: bool = False,
    ) -> Snapshot:
        """Stages the working tree as it is now and returns its tree. `paths`: the only
        files that can have changed since the last snapshot (those caretz's own tools
        wrote, and nothing else ran), so git looks at those alone; None: every file.
        `whole`: every file, whatever the watches saw: the snapshot a restore takes before
        it overwrites files, so that what no hint named (a write through a memory map, a
        background process's) is still held, and undoing the restore brings it back."""
        first = self._excludes is None
        self._sync_excludes()
        named = paths if not first else None
        hint = self.feed.begin(named) if self.feed is not None else None
        unmerged = self._seed() if first else None
        scope = None if first or whole else (paths if paths is not None else hint)
        if scope is not None and len(scope) > PATHS_LIMIT:
            scope = None
        found = scan(self.git, scope)
        candidates, left_out, tracked_left_out, size = self._candidates(found)
        moved = found.index_moved or scope is not None  # (a narrow scan sees only its paths)
        if unmerged is not None:
            # The project's index is the shadow's now; its conflicted files are staged as
            # they are on disk.
            taken = set(candidates) | {path for path, _ in left_out}
            candidates += [p for p in unmerged if p not in taken and self._exists(p)]
            moved = True
        elif first:
            # The session's coverage is settled now: files the rules leave out (as of
            # now) leave the shadow index, unless the project's git tracks them; those
            # come in whatever the rules say. From here on no file leaves for a rule.
            tracked = self.tracked()
            keep = set(tracked)
            ignored = [p for p in self._tracked_but_ignored() if p not in keep]
            secure(self.git, ignored, self.limits.size_cap)
            tracked_left_out += ignored
            missing = self._tracked_not_staged(tracked, {p for p, _ in left_out})
            moved |= bool(missing)
            self._update(missing)
        if unmerged is None:  # (no checkpoint holds a blob of an index just seeded)
            blobs = [entry.blob for entry in found.changed if entry.blob]
            secure_blobs(self.git, blobs, self.limits.size_cap)
        if hint is not None and scope is hint and not (found.changed or self._last_tree is None):
            # The watches saw nothing that differs, and the index is as the last snapshot
            # left it: so is its tree.
            return self._done(self._last_tree, scope, left_out)
        if not (candidates or tracked_left_out or moved):
            unchanged = self._head_tree()  # the index holds HEAD's tree still
            if unchanged:
                return self._done(unchanged, scope, left_out)
        bulk = len(candidates) > BULK_THRESHOLD
        limits = self.limits
        if on_progress and (len(candidates) >= limits.notice_files or size >= limits.notice_bytes):
            on_progress(len(candidates), size)
        if tracked_left_out:
            listing = b"".join(os.fsencode(path) + b"\0" for path in tracked_left_out)
            self.git.run("update-index", "-z", "--force-remove", "--stdin", input=listing)
        if tracked_left_out or bulk or not self._update(candidates):
            left_out += self._add(left_out, bulk=bulk)
        return self._done(self._write_tree(bulk=bulk), scope, left_out)

    def _done(
        self, tree: str, scope: Sequence[str] | None, left_out: list[tuple[str, str]]
    ) -> Snapshot:
        """The snapshot, with what every scan so far leaves out: a narrow scan changes the
        notes of its own paths only."""
        if scope is None:
            self._notes = {}
        else:
            inside = tuple(scope)
            self._notes = {
                path: note
                for path, note in self._notes.items()
                if not any(path.rstrip("/") == s or path.startswith(s + "/") for s in inside)
            }
        self._notes.update(left_out)
        self._last_tree = tree
        if self.feed is not None:
            self.feed.done()
        return Snapshot(tree, tuple(self._notes.values()))

    def _head_tree(self) -> str | None:
        done = self.git.call("rev-parse", "--verify", "-q", "HEAD^{tree}")
        found = done.stdout.decode().strip()
        return found if done.returncode == 0 and found else None

    def _seed(self) -> list[str] | None:
        """A new shadow index from the project's own (seed.py): its unmerged paths, or
        None when there is no shadow index to start or no project index to start from."""
        if self.project_git is None:
            return None
        return seed_index(self.git, self.project_git.index, self.project_git.objects)

    def _tracked_not_staged(self, tracked: list[str], left_out: set[str]) -> list[str]:
        """Files the project tracks that the shadow index lacks (ignored, or new)."""
        staged = set(_split_z(self.git.run("ls-files", "-z", "-c")))
        missing = [p for p in tracked if p not in staged and p not in left_out]
        return [p for p in missing if self._leave_out(p)[0] is None and self._exists(p)]

    def _exists(self, path: str) -> bool:
        return os.path.lexists(self.project / path)

    def _sync_excludes(self) -> bool:
        """Writes the shadow's info/exclude from the project's and the user's rules, as
        they are at the session's first snapshot; later snapshots keep that list."""
        if self._excludes is None:
            self._excludes = self._exclude_rules()
        content = self._excludes
        target = self.git.git_dir / "info" / "exclude"
        if _read(target) == content:
            return False
        private_data.write_file(target, content)
        return True

    def _exclude_rules(self) -> str:
        parts = [
            "# caretz: the project's .git/info/exclude and the user's global ignore file",
            _read(project_exclude_file(self.project)),
            _read(self.user_excludes),
        ]
        for folder in self.excluded_dirs:
            try:
                relative = folder.resolve().relative_to(self.project)
            except ValueError:
                continue
            if relative.parts:
                parts.append(literal_pattern(relative.as_posix()) + "/")
        return "\n".join(parts) + "\n"

    def _candidates(self, found: Scan) -> tuple[list[str], list[tuple[str, str]], list[str], int]:
        """Paths that differ from the shadow index, and those to leave out.

        Returns (paths to stage, [(path, note)] left out, left-out paths the index holds,
        the bytes to stage).
        """
        candidates: list[str] = []
        left_out: list[tuple[str, str]] = []
        tracked_left_out: list[str] = []
        seen: set[str] = set()
        total = 0
        for entry in found.changed:
            path = entry.path
            if path in seen:
                continue
            seen.add(path)
            note, size = self._leave_out(path)
            if note is None:
                candidates.append(path)
                total += size
                continue
            left_out.append((path, note))
            if not entry.untracked:
                tracked_left_out.append(path)
        self._check_limits(len(candidates), total)
        return candidates, left_out, tracked_left_out, total

    def _check_limits(self, files: int, size: int) -> None:
        if files > self.limits.max_files or size > self.limits.max_bytes:
            hint = (
                ""
                if self.project_git
                else "; in a git repository, only the files that differ from its index are copied"
            )
            raise ProjectTooLarge(
                f"{self.project} has {files:,} files ({_human_size(size)}) to snapshot, over "
                f"the limit of {self.limits.max_files:,} files or "
                f"{_human_size(self.limits.max_bytes)}: checkpoints are off here "
                f"(add a .gitignore, or start caretz in the project's folder{hint})"
            )

    def _leave_out(self, path: str) -> tuple[str | None, int]:
        """(why the path is left out, or None; its size)."""
        if path.endswith("/"):
            return f"{path} (nested git repository)", 0
        try:
            info = os.lstat(self.project / path)
        except OSError:
            return None, 0
        if stat.S_ISREG(info.st_mode) and info.st_size > self.limits.size_cap:
            return f"{path} ({_human_size(info.st_size)})", info.st_size
        return None, info.st_size

    def _tracked_but_ignored(self) -> list[str]:
        raw = self.git.run("ls-files", "-z", "-c", "-i", "--exclude-standard")
        return _split_z(raw)

    def _update(self, paths: list[str]) -> bool:
        """Stages just these paths, without walking the tree again; False when git cannot
        (a file became a folder or the other way round), and `git add -A` must."""
        if not paths:
            return True
        listing = b"".join(os.fsencode(path) + b"\0" for path in paths)
        done = self.git.call("update-index", "-z", "--add", "--remove", "--stdin", input=listing)
        return done.returncode == 0

    def _add(self, left_out: list[tuple[str, str]], bulk: bool) -> list[tuple[str, str]]:
        """Stages everything but `left_out`; returns the files git could not read."""
        lines = [literal_pattern(path.rstrip("/")) for path, _ in left_out]
        private_data.write_file(self._large_list, "\n".join(lines) + "\n")
        settings = ["-c", f"core.excludesFile={self._large_list}"]
        env = {}
        if bulk:
            settings += ["-c", "core.bigFileThreshold=1", "-c", "core.compression=1"]
            env = {"GLIBC_TUNABLES": BULK_MALLOC}
        done = self.git.call("add", "-A", "--ignore-errors", settings=settings, env=env)
        if done.returncode == 0:
            return []
        unreadable = [(path, f"{path} (unreadable)") for path in _unreadable(done.stderr)]
        if not unreadable:
            raise CheckpointError(f"git add failed: {last_line(done.stderr)}")
        return unreadable

    def _write_tree(self, bulk: bool) -> str:
        if self.git.borrowed is not None:
            # Without the borrowed store, so every tree is written into the shadow's own
            # (a tree is read by every comparison); the borrowed blobs are not looked for.
            return self.git.text("write-tree", "--missing-ok")
        if bulk:
            return self._write_tree_packed()
        return self.git.text("write-tree")

    def _write_tree_packed(self) -> str:
        """Builds every tree of the index into one pack with `git fast-import`.

        `git write-tree` writes each new tree as a loose file; on a first snapshot of a
        large project that is hundreds of small files and most of its time.
        """
        ref = "refs/caretz/tmp-tree"
        stream = [b"commit ", ref.encode(), b"\ncommitter caretz <caretz@localhost> 0 +0000\n"]
        stream.append(b"data 0\n")
        for line in self.git.run("ls-files", "-s", "-z").split(b"\0"):
            if not line:
                continue
            meta, path = line.split(b"\t", 1)
            mode, sha, _stage = meta.split(b" ")
            stream.append(b"M " + mode + b" " + sha + b" " + _quote(path) + b"\n")
        stream.append(b"\ndone\n")
        self.git.run("fast-import", "--quiet", "--done", "--force", input=b"".join(stream))
        tree = self.git.text("rev-parse", f"{ref}^{{tree}}")
        self.git.run("update-ref", "-d", ref)
        if not tree:
            raise CheckpointError("git fast-import wrote no tree")
        return tree


def _quote(path: bytes) -> bytes:
    """A path as `git fast-import` reads it (C-style quoted when it needs to be)."""
    if not (path.startswith(b'"') or b"\n" in path or b"\\" in path):
        return path
    escaped = path.replace(b"\\", b"\\\\").replace(b'"', b'\\"').replace(b"\n", b"\\n")
    return b'"' + escaped + b'"'


def _unreadable(stderr: bytes) -> list[str]:
    found = (a or b for a, b in _UNREADABLE.findall(os.fsdecode(stderr)))
    return list(dict.fromkeys(found))
