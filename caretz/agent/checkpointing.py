"""Checkpoints taken for the turns of a session: one before each turn's first change.

`TurnCheckpoints` sits on two seams and leaves the turn loop alone: it follows the
session log (a main `Turn.Started` opens a turn, its `Turn.Ended` closes it and
records the tree as the turn left it), and its `before_call` is one of the tool
registry's before-call checks, so the first call of a turn that may change files
(subagents' calls included: they share the registry's checks) takes the snapshot
first. A failure is a `Checkpoint.Failed` warning and the turn goes on; git missing
or a project too large switches checkpoints off for the session.

The store (git's plumbing, the snapshots, the user's ignore file read by a `git
config` run) opens when it is first needed, a turn's first change or the background
staging, not at the session's start: a run's first request never waits for it.

A turn's end records the files as the turn left them. When every change of the turn came
from caretz's own file tools (`effect` "edit", each naming the files it wrote in its
result), no command ran (no bash call, no background job running, no hook of the
user's) and the paths are plain ones inside the project, that record looks at those
files alone (`after_call`); otherwise at the whole tree. A change someone else made
meanwhile is then seen by the next checkpoint, as a change made outside caretz.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from caretz.checkpoints.errors import CheckpointError, GitNotFound, ProjectTooLarge
from caretz.checkpoints.git import find_git, trusted_git
from caretz.checkpoints.project import project_root
from caretz.lazy import lazy_module
from caretz.messages import ToolCall
from caretz.session.records.base import Record
from caretz.session.records.checkpoints import CheckpointFailed, CheckpointSaving
from caretz.session.records.loop import TurnEnded, TurnStarted

if TYPE_CHECKING:
    from caretz.checkpoints.store import CheckpointStore
    from caretz.session.events import EventLog
    from caretz.tools.base import ToolContext, ToolResult
    from caretz.tools.jobtable import JobTable
    from caretz.trusted import Program

if TYPE_CHECKING:
    from caretz.checkpoints import events as checkpoint_events
    from caretz.checkpoints import model as checkpoint_model
    from caretz.checkpoints import notices as checkpoint_notices
    from caretz.checkpoints import snapshot as checkpoint_snapshot
    from caretz.checkpoints import store as checkpoint_store
else:
    # The store (git's plumbing, the snapshots): at a turn's first change or the staging.
    checkpoint_store = lazy_module("caretz.checkpoints.store")
    checkpoint_snapshot = lazy_module("caretz.checkpoints.snapshot")
    # A checkpoint's data, records and notes: only once a turn takes one.
    checkpoint_model = lazy_module("caretz.checkpoints.model")
    checkpoint_events = lazy_module("caretz.checkpoints.events")
    checkpoint_notices = lazy_module("caretz.checkpoints.notices")

# Tools that only read. Any other tool (write, edit, and whatever is added later)
# counts as a change; the shell counts as one unless it cannot write.
READ_ONLY_TOOLS = frozenset({"read", "glob", "grep", "task"})
SHELL_TOOLS = frozenset({"bash"})


def may_change_files(
    call: ToolCall, shell_can_write: bool = True, effect: str | None = None
) -> bool:
    """Whether `call` may change the project's files, so a checkpoint must come first.

    `effect` is what the tool says it does (tools/base.py); without one, the tool's
    name decides. `shell_can_write` is False in a mode where commands cannot write (a
    read-only sandbox or permission mode). Anything unknown counts as a change.
    """
    if effect is None:
        effect = "read" if call.name in READ_ONLY_TOOLS else None
        effect = "shell" if call.name in SHELL_TOOLS else effect
    if effect in ("read", "internal", "fetch"):  # fetch: web_fetch reads the network
        return False
    if effect == "shell":
        return shell_can_write
    return True


def open_store(
    data_dir: Path,
    workspace: Path,
    max_file_size: int,
    env: Mapping[str, str] | None = None,
    git: Program | None = None,
) -> CheckpointStore:
    """The store for the project `workspace` belongs to; raises CheckpointError."""
    limits = checkpoint_snapshot.SnapshotLimits(size_cap=max_file_size)
    project = project_root(workspace)
    return checkpoint_store.CheckpointStore.open(data_dir, project, limits=limits, env=env, git=git)


class TurnCheckpoints:
    """A session's checkpoints; see the module docstring."""

    def __init__(
        self,
        store: CheckpointStore | None,
        off_reason: str | None = None,
        shell_can_write: Callable[[], bool] = lambda: True,
        opener: Callable[[], CheckpointStore] | None = None,
        *,
        session: str = "",
        log: EventLog | None = None,
        timer: Callable[[], float] = time.monotonic,
    ):
        """`store`, or `opener` to open it when it is first needed; `session` and `log`:
        the session whose log they follow (see `attach`); `timer` times each snapshot."""
        self._store = store
        self._timer = timer
        self._opener = opener
        self._opening = threading.Lock()  # the background staging may be opening it
        self.off_reason = off_reason  # why checkpoints are off, once they are
        self.shell_can_write = shell_can_write
        self.session = session
        self._emit: Callable[[Record], Any] = lambda record: None
        if log is not None:
            self._emit = log.emit
            log.subscribe(self.on_event)
        self._turn: int | None = None  # the main turn running now
        self._prompt = ""
        self._taken = False  # this turn asked for its checkpoint
        self._settle_due = False  # ...and may have one (an interrupt leaves it unknown)
        # The files the turn's own file tools wrote since its checkpoint; None: unknown
        # (a command ran, or a tool that does not say what it wrote).
        self._written: set[str] | None = None
        self._unreported = 0  # file tool calls begun whose result is not in yet
        self._jobs: JobTable | None = None  # the background jobs of the calls seen
        self._no_hooks: Callable[[], bool] = lambda: False  # see follow_calls
        self._reported = False
        self._preparing: threading.Thread | None = None
        self._prepare_failure: CheckpointError | None = None

    @classmethod
    def opened(
        cls,
        data_dir: Path,
        workspace: Path,
        max_file_size: int,
        shell_can_write: Callable[[], bool] = lambda: True,
        env: Mapping[str, str] | None = None,
        git: Program | None = None,
        *,
        session: str = "",
        log: EventLog | None = None,
    ) -> TurnCheckpoints:
        """Checkpoints for the project of `workspace`, or off with the reason (no git, or
        none caretz may run); `git` is the session's, resolved at its start. The store
        opens when first needed (a failure then switches checkpoints off and says so)."""
        try:
            git = trusted_git(git) if git is not None else find_git(env, (project_root(workspace),))
        except CheckpointError as error:
            return cls(None, str(error), shell_can_write, session=session, log=log)

        def opener() -> CheckpointStore:
            return open_store(data_dir, workspace, max_file_size, env, git)

        return cls(None, None, shell_can_write, opener, session=session, log=log)

    @property
    def store(self) -> CheckpointStore | None:
        """The store, opened now if it was not yet (None: checkpoints are off)."""
        store = self._open()
        self._report_off("open")  # if it could not be opened
        return store

    def _open(self) -> CheckpointStore | None:
        with self._opening:
            if self._store is None and self._opener is not None and self.off_reason is None:
                opener, self._opener = self._opener, None
                try:
                    self._store = opener()
                except CheckpointError as error:
                    self.off_reason = str(error)
            return self._store

    @property
    def active(self) -> bool:
        unopened = self._store is None and self._opener is None
        return self.off_reason is None and not unopened

    def attach(self, session_id: str, log: EventLog) -> None:
        """Follow the log of a session opened after the checkpoints; says at once when
        they are off."""
        self.session = session_id
        self._emit = log.emit
        log.subscribe(self.on_event)
        self.announce()

    def announce(self) -> None:
        """Say in the log that checkpoints are off, and why, if they are (once the
        session's start is in it)."""
        self._report_off("open")

    def prepare_in_background(self) -> None:
        """Stage the project now, while the user types, so the first checkpoint is quick."""
        if not self.active or self._preparing is not None:
            return
        self._preparing = threading.Thread(
            target=self._prepare, name="caretz-checkpoint-prepare", daemon=True
        )
        self._preparing.start()

    def _prepare(self) -> None:
        try:
            store = self._open()  # the main thread says so if it cannot be opened
            if store is not None:
                store.prepare()
        except Exception as error:  # reported from the main thread (see _collect_prepare)
            self._prepare_failure = (
                error if isinstance(error, CheckpointError) else CheckpointError(str(error))
            )

    def _collect_prepare(self, wait: bool) -> None:
        """Takes in the background staging's outcome: a project too large switches
        checkpoints off; any other failure is left to the checkpoint to meet again."""
        thread = self._preparing
        if thread is None or (thread.is_alive() and not wait):
            return
        if thread.is_alive():
            message = "checkpoint: waiting for the project's files, saved in the background, first"
            self._emit(CheckpointSaving(stage="prepare", message=message))
        thread.join()
        self._preparing = None
        self._report_off("open")
        if isinstance(self._prepare_failure, ProjectTooLarge):
            self._failed("prepare", self._prepare_failure)

    # -- the seams -----------------------------------------------------------------------
    def before_call(self, call: ToolCall, ctx: ToolContext) -> None:
        """A tool registry check: the turn's checkpoint before its first change."""
        if self._turn is None or not self.active:
            return
        if not may_change_files(call, self.shell_can_write(), ctx.effect):
            return
        if not self._taken:
            self._take(self._turn)
        # Until its result names what it wrote (after_call), the call may write anything.
        if ctx.effect == "edit" and self._written is not None:
            self._unreported += 1
        else:
            self._written = None

    def _take(self, turn: int) -> None:
        """The turn's checkpoint, taken before its first change."""
        self._taken = True
        self._collect_prepare(wait=True)
        if not self.active:
            return
        store = self.store
        if store is None:
            return
        self._settle_due = True
        self._written, self._unreported = set(), 0
        started = self._timer()
        try:
            checkpoint = store.checkpoint(
                checkpoint_model.CheckpointMeta(self.session, turn, self._prompt),
                on_progress=self._saving,
            )
        except Exception as error:
            self._settle_due, self._written = False, None
            self._failed("checkpoint", error)
            return
        project, note = str(store.project), checkpoint_notices.left_out_note(checkpoint)
        took = self._timer() - started
        self._emit(checkpoint_events.created_record(checkpoint, project, note, took))

    def follow_calls(self, no_hooks: Callable[[], bool]) -> Callable[..., None]:
        """The registry's after-call hook that collects the files each call wrote (see the
        module docstring); `no_hooks`: whether no hook of the user's can run a command."""
        self._no_hooks = no_hooks
        return self.after_call

    def after_call(self, call: ToolCall, result: ToolResult, ctx: ToolContext) -> None:
        self._jobs = ctx.jobs
        if self._written is None or ctx.effect != "edit" or not self._unreported:
            return
        self._unreported -= 1
        written = self._tool_paths(result, ctx)
        if written is None:
            self._written = None
        else:
            self._written.update(written)

    def _tool_paths(self, result: ToolResult, ctx: ToolContext) -> list[str] | None:
        """The project-relative paths a file tool says it wrote; None when it names none,
        failed (it may have written part), or a path goes through a link or leaves the
        project."""
        if not result.ok or not result.files_changed or self._store is None:
            return None
        project, workspace = str(self._store.project), os.path.realpath(ctx.workspace)
        found = []
        for shown in result.files_changed:
            full = os.path.normpath(os.path.join(workspace, shown))
            if os.path.realpath(full) != full or not full.startswith(project + os.sep):
                return None
            found.append(full[len(project) + 1 :].replace(os.sep, "/"))
        return found

    def _settle_paths(self) -> list[str] | None:
        """What the turn's end looks at: the files its tools wrote, or None (everything)."""
        written, self._written = self._written, None
        jobs = self._jobs.jobs() if self._jobs is not None else []
        if written is None or self._unreported or not self._no_hooks():
            return None
        if any(job.running for job in jobs):
            return None
        return sorted(written)

    def _saving(self, files: int, size: int) -> None:
        """A snapshot that hashes many files is starting: say so while it runs."""
        message = checkpoint_notices.saving_line(files, size)
        self._emit(CheckpointSaving(stage="checkpoint", files=files, bytes=size, message=message))

    def on_event(self, event: Record) -> None:
        """Follows the main agent's turns in the session log."""
        if isinstance(event, TurnStarted) and event.agent == "main":
            self.end_turn()  # a turn that ended without its Turn.Ended (it crashed)
            self._turn, self._prompt = int(event.turn or 0), event.prompt
            self._collect_prepare(wait=False)
        elif isinstance(event, TurnEnded) and event.agent == "main":
            self.end_turn()

    def end_turn(self) -> None:
        """Records the tree as the turn left it, if the turn took a checkpoint; a
        `Checkpoint.Settled` event says which files the turn changed."""
        turn, due, paths = self._turn, self._settle_due, self._settle_paths()
        self._turn, self._taken, self._settle_due = None, False, False
        if not due or turn is None or not self.active or self._store is None:
            return
        started = self._timer()
        try:
            settled = self._store.settle(
                checkpoint_model.CheckpointMeta(self.session, turn, self._prompt), paths
            )
        except Exception as error:
            self._failed("settle", error)
            return
        if settled is not None:
            self._emit(checkpoint_events.settled_record(settled, self._timer() - started))

    def close(self) -> None:
        """At the session's end: settles a turn left open, then gives back the store's
        watches."""
        try:
            self.end_turn()
        finally:
            if self._store is not None:
                self._store.close()

    # -- warnings ------------------------------------------------------------------------
    def _failed(self, stage: str, error: BaseException) -> None:
        if isinstance(error, GitNotFound | ProjectTooLarge):
            self.off_reason = str(error)
            self._report_off(stage)
            return
        if stage == "settle":
            message = f"checkpoint: could not record the files as the turn left them: {error}"
        else:
            message = f"checkpoint failed: {error}; the turn goes on"
        self._emit(CheckpointFailed(stage=stage, message=message))

    def _report_off(self, stage: str) -> None:
        if self.off_reason is None or self._reported:
            return
        self._reported = True
        self._emit(CheckpointFailed(stage=stage, message=self.off_reason, off=True))
