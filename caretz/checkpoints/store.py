"""CheckpointStore: snapshots of one project's working tree, listed per session, restorable.

One shadow repository per project, under `<data dir>/checkpoints/<name>-<hash>/`,
keyed by the project's resolved path. The project's own `.git` is never read or
written (only its `info/exclude`, read for ignore rules).
"""

from __future__ import annotations

import builtins
import contextlib
import hashlib
import os
import re
import shutil
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path

from caretz import private_data
from caretz.checkpoints import history
from caretz.checkpoints.conflicts import changed_by_others, find_conflicts
from caretz.checkpoints.errors import CheckpointError, RestoreConflict, UnknownCheckpoint
from caretz.checkpoints.git import INDEX_REF, ShadowGit, find_git, trusted_git
from caretz.checkpoints.model import (
    CHANGED_LIMIT,
    Checkpoint,
    CheckpointMeta,
    Conflict,
    Kind,
    RestorePreview,
    RestoreResult,
    decode_message,
    encode_message,
    first_line,
)
from caretz.checkpoints.project import project_git
from caretz.checkpoints.restore import (
    BlobReader,
    Change,
    Step,
    TreeWriter,
    apply_or_roll_back,
    diff_trees,
    unsaved_paths,
)
from caretz.checkpoints.snapshot import (
    DEFAULT_LIMITS,
    Progress,
    Snapshot,
    SnapshotLimits,
    Stager,
    project_tracked,
    user_exclude_file,
)
from caretz.trusted import Program

Clock = Callable[[], float]


def project_folder(data_dir: Path, project: Path) -> Path:
    """Where a project's checkpoints live: one folder per resolved project path."""
    resolved = project.resolve()
    digest = hashlib.sha256(os.fsencode(resolved)).hexdigest()[:16]
    name = re.sub(r"[^A-Za-z0-9._-]", "_", resolved.name)[:40] or "root"
    return data_dir / "checkpoints" / f"{name}-{digest}"


class CheckpointStore:
    """Checkpoints of one project. Every method takes the store's lock while it works."""

    def __init__(self, git: ShadowGit, stager: Stager, folder: Path, clock: Clock = time.time):
        self.git = git
        self.stager = stager
        self.folder = folder
        self.project = git.work_tree
        self.clock = clock

    @classmethod
    def open(
        cls,
        data_dir: Path,
        project: Path,
        *,
        limits: SnapshotLimits = DEFAULT_LIMITS,
        clock: Clock = time.time,
        env: Mapping[str, str] | None = None,
        git: Program | None = None,
        watch: bool = True,
    ) -> CheckpointStore:
        """The store for `project`; raises GitNotFound when there is no git to run (`git`:
        the session's, else the first on PATH outside the project). `watch`: see watch.py."""
        env = os.environ if env is None else env
        project = project.resolve()
        git_path = str((trusted_git(git) if git is not None else find_git(env, (project,))).path)
        if not project.is_dir():
            raise CheckpointError(f"no project folder {project}")
        data_dir = data_dir.resolve()
        folder = project_folder(data_dir, project)
        # git finds what it runs on this PATH: the trusted git's own folder and the
        # system's, never an entry of the user's PATH a command could have written.
        system = [entry for entry in os.defpath.split(os.pathsep) if entry]
        path = os.pathsep.join(dict.fromkeys([os.path.dirname(git_path), *system]))
        shadow = ShadowGit(git_path, folder / "git", project, path)
        stager = Stager(
            shadow,
            limits,
            (data_dir,),
            user_exclude_file(git_path),
            tracked=lambda: project_tracked(git_path, project),
            project_git=project_git(project),
            watch=watch,
        )
        return cls(shadow, stager, folder, clock)

    # -- taking checkpoints ------------------------------------------------------------

    def prepare(self, on_progress: Progress | None = None) -> None:
        """Stages the working tree without recording a checkpoint, so that the first
        checkpoint of a session only hashes what changed since. Safe to run in a
        background thread at start-up: the store's lock keeps it apart from the rest."""
        with self.git.locked():
            self._ready()
            self.stager.snapshot(on_progress)

    def checkpoint(self, meta: CheckpointMeta, on_progress: Progress | None = None) -> Checkpoint:
        """Snapshots the working tree before a turn's first change; `on_progress` hears
        (files, bytes) before a snapshot that hashes many files starts."""
        with self.git.locked():
            self._ready()
            records = history.chain(self.git, meta.session)
            return self._commit("turn", self.stager.snapshot(on_progress), meta, records)

    def settle(self, meta: CheckpointMeta, paths: Sequence[str] | None = None) -> Checkpoint | None:
        """Records the tree after caretz's last change of the turn that took a checkpoint.

        Call it when such a turn ends, however it ends. Files that change after this
        and before the next checkpoint are counted as changed outside caretz. A no-op
        (None) when the session's newest record is already a settled state. `paths`
        (project-relative): the only files the turn changed, when caretz knows them (its
        own file tools wrote them, and nothing else ran); only those are looked at."""
        with self.git.locked():
            self._ready()
            records = history.chain(self.git, meta.session)
            if not records or records[-1].kind == "settled":
                return None
            return self._settle(records, meta, paths)

    def close(self) -> None:
        """Gives back the watches (later scans are whole), under the lock snapshots take."""
        with contextlib.suppress(OSError), self.git.locked():  # no data folder: exit frees them
            self.stager.close()

    # -- reading ---------------------------------------------------------------------

    def list(self, session: str) -> list[Checkpoint]:
        """The session's turn and rewind checkpoints, oldest first."""
        with self.git.locked():
            self._ready()
            return history.visible(history.chain(self.git, session))

    def sessions(self) -> builtins.list[str]:
        """Sessions that have checkpoints in this project, oldest first."""
        with self.git.locked():
            self._ready()
            return history.sessions(self.git)

    def get(self, ref: str, session: str | None = None) -> Checkpoint:
        """A checkpoint by id or id prefix, from `session` or from every session."""
        names = [session] if session else self.sessions()
        found = [cp for name in names for cp in self.list(name)]
        return history.find(found, ref)

    def for_turn(self, session: str, turn: int) -> Checkpoint:
        return history.for_turn(self.list(session), session, turn)

    def last_turn(self, session: str) -> Checkpoint:
        """The checkpoint before the session's latest turn that changed files (for /undo)."""
        turns = [cp for cp in self.list(session) if cp.kind == "turn"]
        if not turns:
            raise UnknownCheckpoint(f"session {session} has no checkpoints")
        return turns[-1]

    # -- restoring -------------------------------------------------------------------

    def preview(
        self,
        target: Checkpoint,
        paths: Sequence[str] | None = None,
        caretz_paths: Collection[str] = (),
    ) -> RestorePreview:
        """What `restore` would change now, and which of those files conflict."""
        with self.git.locked():
            self._ready()
            now = self.stager.snapshot(whole=True)
            changes = self._restore_changes(now.tree, target, paths)
            conflicts = self._conflicts(target, now.tree, changes, caretz_paths)
            return RestorePreview(target, tuple(c.as_file_change() for c in changes), conflicts)

    def restore(
        self,
        target: Checkpoint,
        meta: CheckpointMeta,
        *,
        paths: Sequence[str] | None = None,
        force: bool = False,
        allowed: Collection[str] = (),
        caretz_paths: Collection[str] = (),
        on_step: Step | None = None,
    ) -> RestoreResult:
        """Makes the working tree match `target` (all files, or only `paths`).

        A "rewind" checkpoint of the whole tree as it is now comes first, so the restore
        can itself be undone by restoring `result.before`. Conflicts raise RestoreConflict
        unless `force`, or unless every conflicting path is in `allowed` (what the user
        confirmed after a preview). A failure half-way raises RestoreFailed with every file
        put back as it was."""
        with self.git.locked():
            self._ready()
            now = self.stager.snapshot(whole=True)
            changes = self._restore_changes(now.tree, target, paths)
            conflicts = self._conflicts(target, now.tree, changes, caretz_paths)
            blocking = [c for c in conflicts if c.path not in set(allowed)]
            if blocking and not force:
                raise RestoreConflict(blocking)
            records = history.chain(self.git, meta.session)
            before = self._commit("rewind", now, meta, records, restored_to=target.id)
            displaced = self._apply(changes, before, records, on_step)
            self._settle([*records, before], meta)
            files = tuple(c.as_file_change() for c in changes)
            return RestoreResult(
                target=target,
                before=before,
                changes=files,
                displaced=displaced,
                overwritten_conflicts=conflicts,
            )

    def mark_rewind(self, target: Checkpoint, meta: CheckpointMeta) -> Checkpoint:
        """A "rewind" checkpoint of the tree as it is, for a rewind that restores no file
        (the conversation only), so that it can be undone like any other rewind."""
        with self.git.locked():
            self._ready()
            records = history.chain(self.git, meta.session)
            now = self.stager.snapshot(whole=True)
            before = self._commit("rewind", now, meta, records, restored_to=target.id)
            self._settle([*records, before], meta)
            return before

    # -- disk ------------------------------------------------------------------------

    def disk_usage(self) -> int:
        """Bytes on disk used by this project's checkpoints."""
        total = 0
        for folder, _dirs, files in os.walk(self.folder):
            for name in files:
                try:
                    total += os.lstat(os.path.join(folder, name)).st_blocks * 512
                except OSError:
                    continue
        return total

    def drop_session(self, session: str) -> None:
        """Forgets a session's checkpoints; `compact` then frees their space."""
        with self.git.locked():
            self._ready()
            ref = history.session_ref(session)
            if history.tip(self.git, ref) is None:
                raise UnknownCheckpoint(f"session {session} has no checkpoints")
            self.git.run("update-ref", "-d", ref)
            latest = history.read_commits(self.git, ["-1", history.LATEST])
            if latest and latest[0].session == session:
                self.git.run("update-ref", "-d", history.LATEST)

    def prune(self, older_than: float) -> builtins.list[str]:
        """Drops sessions whose newest checkpoint is older than `older_than` seconds."""
        cutoff = self.clock() - older_than
        dropped = []
        for session in self.sessions():
            records = self.list(session)
            if records and records[-1].time < cutoff:
                self.drop_session(session)
                dropped.append(session)
        if dropped:
            self.compact()
        return dropped

    def compact(self) -> None:
        """Packs what is kept into one pack and deletes what no session refers to."""
        with self.git.locked():
            self._ready()
            self.git.repack_own()
            shutil.rmtree(self.folder / "trash", ignore_errors=True)

    # -- internals -------------------------------------------------------------------

    def _ready(self) -> None:
        self.git.ensure_repo()
        marker = self.folder / "project"
        if not marker.is_file():
            private_data.write_file(marker, str(self.project) + "\n")

    def _commit(
        self,
        kind: Kind,
        snap: Snapshot,
        meta: CheckpointMeta,
        records: Sequence[Checkpoint],
        restored_to: str | None = None,
        settles: Checkpoint | None = None,
    ) -> Checkpoint:
        """Records a snapshot as the newest commit of the session's chain (`records`)."""
        parent = records[-1].id if records else None
        compare_to = settles.tree if settles is not None else self._previous_tree(records)
        changed = self._changed_names(compare_to, snap.tree) if compare_to else []
        now = self.clock()
        fields = {
            "session": meta.session,
            "turn": meta.turn,
            "kind": kind,
            "prompt": first_line(meta.prompt),
            "time": now,
            "changed": changed[:CHANGED_LIMIT],
            "changed_count": len(changed),
            "left_out": list(snap.left_out),
            "restored_to": restored_to,
            "settles": settles.id if settles is not None else None,
        }
        message = encode_message(fields)
        date = {"GIT_AUTHOR_DATE": f"@{int(now)} +0000", "GIT_COMMITTER_DATE": f"@{int(now)} +0000"}
        parents = ["-p", parent] if parent else []
        commit = self.git.text("commit-tree", snap.tree, *parents, input=message.encode(), env=date)
        ref = history.session_ref(meta.session)
        # The index holds this tree now: HEAD (INDEX_REF) follows, for the next scan.
        updates = f"update {ref} {commit} {parent or '0' * 40}\nupdate {history.LATEST} {commit}\n"
        updates += f"update {INDEX_REF} {commit}\n"
        self.git.run("update-ref", "--stdin", input=updates.encode())
        checkpoint = decode_message(commit, snap.tree, message)
        assert checkpoint is not None
        return checkpoint

    def _forget(self, checkpoint: Checkpoint, parent: str | None) -> None:
        """Takes back the rewind checkpoint of a restore that changed nothing in the end."""
        ref = history.session_ref(checkpoint.session)
        updates = f"update {ref} {parent}" if parent else f"delete {ref}"
        self.git.run("update-ref", "--stdin", input=updates.encode() + b"\n")

    def _settle(
        self,
        records: Sequence[Checkpoint],
        meta: CheckpointMeta,
        paths: Sequence[str] | None = None,
    ) -> Checkpoint:
        """Records the tree now as the settled state of the chain's newest checkpoint."""
        snap = self.stager.snapshot(paths=paths)
        return self._commit("settled", snap, meta, records, settles=records[-1])

    def _previous_tree(self, records: Sequence[Checkpoint]) -> str | None:
        """The tree a new checkpoint is compared with: the session's last checkpoint,
        else the project's newest snapshot from any session."""
        for cp in reversed(records):
            if cp.kind != "settled":
                return cp.tree
        latest = history.tip(self.git, history.LATEST)
        return f"{latest}^{{tree}}" if latest else None

    def _changed_names(self, old: str, new: str) -> builtins.list[str]:
        if old == new:
            return []
        raw = self.git.run("diff-tree", "-r", "-z", "--no-renames", "--name-only", old, new)
        return [os.fsdecode(p) for p in raw.split(b"\0") if p]

    def _restore_changes(
        self, now_tree: str, target: Checkpoint, paths: Sequence[str] | None
    ) -> builtins.list[Change]:
        pathspecs = [self._relative(p) for p in paths] if paths else []
        return diff_trees(self.git, now_tree, target.tree, pathspecs)

    def _relative(self, path: str) -> str:
        """`path` relative to the project; an absolute path may go through a symlink."""
        candidate = Path(os.path.normpath(self.project / path))
        for spelling in (candidate, candidate.parent.resolve() / candidate.name):
            try:
                relative = spelling.relative_to(self.project)
            except ValueError:
                continue
            return relative.as_posix() if relative.parts else "."
        raise CheckpointError(f"{path} is outside the project {self.project}")

    def _inside(self, paths: Collection[str]) -> builtins.list[str]:
        """The paths within the project, relative to it; others are dropped."""
        inside = []
        for path in paths:
            try:
                inside.append(self._relative(path))
            except CheckpointError:
                continue
        return inside

    def _conflicts(
        self,
        target: Checkpoint,
        now_tree: str,
        changes: Sequence[Change],
        caretz_paths: Collection[str],
    ) -> tuple[Conflict, ...]:
        records = history.chain(self.git, target.session)
        outside, unknown = changed_by_others(
            records, target, now_tree, lambda a, b: set(self._changed_names(a, b))
        )
        unsaved = unsaved_paths(self.project, changes)
        found = find_conflicts(
            [c.path for c in changes],
            outside,
            unknown,
            self._inside(caretz_paths),
            unsaved,
            str(self.folder / "displaced"),
        )
        return tuple(found)

    def _apply(
        self,
        changes: Sequence[Change],
        before: Checkpoint,
        records: Sequence[Checkpoint],
        on_step: Step | None,
    ) -> tuple[tuple[str, str], ...]:
        """Writes the changes; returns what was moved aside. If the restore fails and
        every step was undone, the rewind checkpoint `before` is taken back too."""
        latest_before = records[-1].id if records else None
        writer = TreeWriter(
            self.project,
            BlobReader(self.git),
            self.folder / "trash" / before.short_id,
            self.folder / "displaced" / before.short_id,
            on_step,
        )
        try:
            hint = f"the tree before the restore is checkpoint {before.short_id}"
            apply_or_roll_back(writer, changes, hint)
        except BaseException as failure:
            undone = not writer.rollback_problems
            if undone and getattr(failure, "rolled_back", True):
                self._forget(before, latest_before)
            raise
        finally:
            writer.blobs.close()
        writer.discard_trash()
        return tuple(writer.displaced)
