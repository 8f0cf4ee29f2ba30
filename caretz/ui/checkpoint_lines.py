"""Terminal lines for checkpoint events: a snapshot's left-out files, a checkpoint
that failed, the undo line after a loop-guard stop (only when the stopped turn changed
files), and `caretz sessions show`'s line for each checkpoint and rewind."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

from caretz.checkpoints.notices import SCOPE_FLAGS, checkpoint_command, rewind_command
from caretz.lazy import lazy_module
from caretz.session.records.base import LoopGuardRecord, Record
from caretz.session.records.checkpoints import (
    CheckpointCreated,
    CheckpointFailed,
    CheckpointRestored,
    CheckpointSaving,
    CheckpointSettled,
)
from caretz.session.records.loop import TurnStarted
from caretz.ui.guard_lines import PREFIX

if TYPE_CHECKING:
    from caretz.session.records import guard as guard_records
else:
    # The guard's events, loaded by the time one is written: a run with the guard off never is.
    guard_records = lazy_module("caretz.session.records.guard")

UNDO_LABEL = f"{PREFIX} undo this turn's changes:"
SCOPES = {"files": "files", "conversation": "conversation", "both": "files and conversation"}


class CheckpointLines:
    """What a running session's view prints for checkpoint events (Rich markup).

    It remembers the running turn's checkpoint and whether the loop guard stopped the
    turn; when such a turn ends having changed files (its `Checkpoint.Settled` names
    some), the command that undoes them follows. A turn whose checkpoint was taken (a
    command that might have written) but that changed nothing gets no undo line.
    """

    def __init__(self, interactive: bool = False):
        self.interactive = interactive
        self.undo: str | None = None  # the running turn's undo command
        self.stopped = False  # the loop guard stopped the running turn

    def render(self, event: Record) -> list[str]:
        if isinstance(event, TurnStarted) and event.agent == "main":
            self.undo, self.stopped = None, False
        elif isinstance(event, CheckpointCreated) and event.kind == "turn":
            self.undo = rewind_command(str(event.session), int(event.turn or 0))
            return [f"[dim]{escape(event.note)}[/]"] if event.note else []
        elif isinstance(event, CheckpointFailed):
            return [f"[yellow]{escape(str(event.message or 'checkpoint failed'))}[/]"]
        elif isinstance(event, CheckpointSaving):
            return [f"[dim]{escape(str(event.message))}[/]"] if event.message else []
        elif isinstance(event, LoopGuardRecord):
            self.stopped = self.stopped or isinstance(event, guard_records.LoopGuardStopped)
        elif isinstance(event, CheckpointSettled) and self.stopped and self.undo is not None:
            self.stopped = False
            if event.changed_count:
                return [f"[magenta]{escape(self.undo_line())}[/]"]
        return []

    def undo_line(self) -> str:
        assert self.undo is not None
        if self.interactive:
            return f"{UNDO_LABEL} /undo (files and conversation), or {self.undo}"
        return f"{UNDO_LABEL} {self.undo}"


def describe(event: Record) -> str | None:
    """A checkpoint event as one line of `caretz sessions show`; None for other events."""
    if isinstance(event, CheckpointCreated):
        return _created(event)
    if isinstance(event, CheckpointRestored):
        return _restored(event)
    if isinstance(event, CheckpointFailed):
        return f"[checkpoints] {event.message}"
    return None


def _created(event: CheckpointCreated) -> str:
    short = str(event.id)[:12]
    if event.kind == "rewind":
        what = "taken before a rewind (rewinding to it undoes the rewind)"
    else:
        what = f"before turn {event.turn}'s first change"
    left_out = event.left_out or []
    extra = f"; left out {len(left_out)}: {', '.join(left_out)}" if left_out else ""
    return f"[checkpoint {short}] {what}{extra}"


def _restored(event: CheckpointRestored) -> str:
    scope = SCOPES.get(str(event.scope), str(event.scope))
    target = f"checkpoint {str(event.to)[:12]} (turn {event.to_turn})"
    changed = event.changes_count
    files = f"; {changed} file(s) changed" if changed is not None else ""
    before = event.before
    flag = SCOPE_FLAGS.get(str(event.scope), "")
    session = str(event.to_session)
    undo = f"; undo: {checkpoint_command(session, before, flag)}" if before else ""
    return f"[rewound {scope} to {target}]{files}{undo}"
