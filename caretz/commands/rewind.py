"""`caretz rewind`: a session's files, conversation or both back to a checkpoint, headless.

    caretz rewind [SESSION]                          lists the session's checkpoints
    caretz rewind [SESSION] --turn N [--files-only | --conversation-only] [--force]
    caretz rewind [SESSION] --checkpoint ID ...      (a rewind's own checkpoint: undoes it)
    caretz rewind [SESSION] --undo                   as /undo: the rewind just made, exactly

SESSION is an ID or any unique part of one; without it, the latest session of this
folder's project. Every rewind names the folder whose files it changes, and a session
of another folder (named by its ID) says so first.

A problem people can fix (an unknown session or turn, files changed outside caretz
without --force) is one `caretz: …` line and exit code 2; a restore that failed
half-way (and put every file back) exits 1.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from caretz.agent.rewind import FILE_SCOPES, Rewound, SessionRewind
from caretz.app.rewinding import logged_session, open_rewind
from caretz.checkpoints import CheckpointError, RestoreFailed, UnknownCheckpoint
from caretz.checkpoints.events import Scope
from caretz.checkpoints.notices import SCOPE_FLAGS, checkpoint_command, conflict_lines
from caretz.checkpoints.project import project_root
from caretz.commands.loading import with_settings
from caretz.session.store import SessionNotFound
from caretz.ui.rewind import describe, when, where_to
from caretz.usage_error import fail

if TYPE_CHECKING:
    from caretz.checkpoints import Checkpoint
    from caretz.config.overrides import Flags
    from caretz.config.settings import Settings


@dataclass(frozen=True, kw_only=True)
class RewindArgs:
    session: str | None = None  # None: the latest session
    turn: int | None = None
    checkpoint: str | None = None
    files_only: bool = False
    conversation_only: bool = False
    force: bool = False
    undo: bool = False

    @property
    def scope(self) -> Scope:
        if self.files_only:
            return "files"
        return "conversation" if self.conversation_only else "both"


def rewind_session(
    flags: Flags,
    session: str | None,
    turn: int | None,
    checkpoint: str | None,
    *,
    files_only: bool = False,
    conversation_only: bool = False,
    force: bool = False,
    undo: bool = False,
) -> int:
    args = RewindArgs(
        session=session,
        turn=turn,
        checkpoint=checkpoint,
        files_only=files_only,
        conversation_only=conversation_only,
        force=force,
        undo=undo,
    )
    return with_settings(flags, lambda settings: run_rewind(settings, args))


def run_rewind(settings: Settings, args: RewindArgs) -> int:
    if args.files_only and args.conversation_only:
        return fail("--files-only and --conversation-only exclude each other: give one or neither")
    if sum((args.turn is not None, args.checkpoint is not None, args.undo)) > 1:
        return fail("give one of --turn, --checkpoint and --undo")
    if args.undo and (args.files_only or args.conversation_only):
        return fail("--undo restores what the rewind or turn it undoes changed: no scope flag")
    here = project_root(Path.cwd())
    try:
        logged = logged_session(settings, args.session, here)
        if logged.project != here:
            sys.stderr.write(
                f"caretz: session {logged.id} is of another folder: {logged.project}\n"
            )
        rewinder = open_rewind(settings, logged)
    except (SessionNotFound, CheckpointError) as error:
        return fail(str(error))
    try:
        return rewind_or_list(rewinder, args)
    finally:
        rewinder.log.close()


def rewind_or_list(rewinder: SessionRewind, args: RewindArgs) -> int:
    if args.turn is None and args.checkpoint is None and not args.undo:
        return list_checkpoints(rewinder)
    scope = args.scope
    try:
        if args.undo:
            target, scope = rewinder.undo_target()
        elif args.turn is not None:
            target = rewinder.for_turn(args.turn)
        else:
            target = rewinder.by_id(args.checkpoint or "")
    except UnknownCheckpoint as error:
        return fail(str(error))
    if scope in FILE_SCOPES and not args.force:
        conflicts = rewinder.preview(target).conflicts
        if conflicts:
            fail(
                f"{len(conflicts)} file(s) changed outside caretz since the checkpoint would be "
                "overwritten; nothing was changed (add --force to overwrite them):"
            )
            sys.stderr.write("".join(line + "\n" for line in conflict_lines(conflicts)))
            return 2
    try:
        done = rewinder.rewind(target, scope, force=args.force)
    except RestoreFailed as error:
        sys.stderr.write(f"caretz: {error}\n")
        return 1
    except CheckpointError as error:
        return fail(str(error))
    lines = result_lines(rewinder.session, done, rewinder.store.project)
    sys.stdout.write("".join(line + "\n" for line in lines))
    return 0


def list_checkpoints(rewinder: SessionRewind) -> int:
    points = rewinder.checkpoints()
    out = sys.stdout
    if not points:
        out.write(f"session {rewinder.session} has no checkpoints\n")
        return 0
    out.write(f"checkpoints of session {rewinder.session} ({rewinder.store.project}):\n")
    out.write(f"  {'#':>3}  {'turn':>4}  {'when':<16}  {'files':>5}  {'id':<12}  prompt\n")
    for number, point in reversed(list(enumerate(points, 1))):
        out.write(_row(number, point, points) + "\n")
    out.write("rewind with --turn N (a turn) or --checkpoint ID (any entry)\n")
    return 0


def _row(number: int, point: Checkpoint, points: list[Checkpoint]) -> str:
    files = "-" if point.turn_changed_count is None else str(point.turn_changed_count)
    return (
        f"  {number:>3}  {point.turn:>4}  {when(point):<16}  {files:>5}  "
        f"{point.short_id:<12}  {describe(point, points)}"
    )


def result_lines(session: str, done: Rewound, project: Path) -> list[str]:
    lines = []
    if done.files is not None:
        count = len(done.files.changes)
        files = f"{count} file{'s' if count != 1 else ''}"
        lines.append(f"restored {files} {where_to(done.target)}, in {project}")
        lines += [
            f"{path} was in no checkpoint: moved to {to}" for path, to in done.files.displaced
        ]
    if done.history is not None:
        lines.append(
            f"the conversation is back {where_to(done.target)}; "
            f"caretz --resume {session} carries on from there"
        )
    undo = checkpoint_command(session, done.before.id, SCOPE_FLAGS[done.scope])
    lines.append(f"undo this rewind: {undo}")
    return lines
