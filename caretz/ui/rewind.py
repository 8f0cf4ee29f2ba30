"""/rewind and /undo in the interactive session.

/rewind lists the session's checkpoints, newest first, and asks which one and
what to restore (files, conversation or both); `/rewind 3 files` answers both
questions at once. /undo rewinds the newest turn that changed files, files and
conversation; right after a rewind it undoes that rewind exactly (the files and the
conversation as they were before it). Files changed outside caretz that a restore
would overwrite are listed, and nothing is overwritten until the user says yes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table

from caretz.agent.rewind import FILE_SCOPES, Rewound, SessionRewind
from caretz.checkpoints import (
    Checkpoint,
    CheckpointError,
    Conflict,
    RestoreConflict,
    UnknownCheckpoint,
)
from caretz.checkpoints.events import Scope
from caretz.checkpoints.notices import conflict_lines
from caretz.config_base import ConfigError
from caretz.inbound import ascii_number
from caretz.lazy import lazy_module

if TYPE_CHECKING:
    import prompt_toolkit
else:
    prompt_toolkit = lazy_module("prompt_toolkit")  # only to ask: `caretz rewind --turn` never does

if TYPE_CHECKING:
    from caretz.ui.session_control import SessionControl

Ask = Callable[[str], str | None]  # a question → the answer typed; None: cancelled
SCOPE_WORDS: dict[str, Scope] = {
    "files": "files",
    "f": "files",
    "conversation": "conversation",
    "c": "conversation",
    "both": "both",
    "b": "both",
}


def terminal_ask(question: str) -> str | None:
    """Asks at the terminal; Ctrl-C or Ctrl-D cancels."""
    try:
        return prompt_toolkit.prompt(question)
    except (EOFError, KeyboardInterrupt):
        return None


def when(checkpoint: Checkpoint, now: float | None = None) -> str:
    """The checkpoint's time: the clock time today, the date too before today."""
    taken = time.localtime(checkpoint.time)
    today = time.localtime(now if now is not None else time.time())
    same_day = taken[:3] == today[:3]
    return time.strftime("%H:%M:%S" if same_day else "%Y-%m-%d %H:%M", taken)


def describe(checkpoint: Checkpoint, points: Sequence[Checkpoint]) -> str:
    """The prompt column: the turn's prompt, or which checkpoint a rewind went to."""
    if checkpoint.kind == "turn":
        return checkpoint.prompt
    target = next((cp for cp in points if cp.id == checkpoint.restored_to), None)
    if target is not None and target.kind == "turn":
        return f"before rewinding to turn {target.turn}"
    return f"before rewinding to {(checkpoint.restored_to or '')[:12]}"


def where_to(checkpoint: Checkpoint) -> str:
    """Where a rewind went: "to before turn 3", or to a rewind's own checkpoint."""
    if checkpoint.kind == "turn":
        return f"to before turn {checkpoint.turn}"
    return f"to the checkpoint taken before the rewind at {when(checkpoint)}"


class RewindChooser:
    """/rewind and /undo for one interactive session."""

    def __init__(self, repl: SessionControl, ask: Ask = terminal_ask):
        self.repl = repl
        self.ask = ask

    def rewind(self, argument: str) -> None:
        """`/rewind [N [files|conversation|both]]`."""
        rewinder = self.rewinder()
        if rewinder is None:
            return
        points = rewinder.checkpoints()
        if not points:
            self.repl.info("no checkpoints yet: one is taken before a turn's first change")
            return
        self.show(points)
        words = argument.split()
        target = self.pick(points, words[0] if words else None)
        if target is None:
            return
        scope = self.pick_scope(words[1] if len(words) > 1 else None)
        if scope is not None:
            self.restore(rewinder, target, scope)

    def undo(self) -> None:
        """`/undo`: a rewind just made, exactly; else the newest turn that changed files,
        files and conversation."""
        rewinder = self.rewinder()
        if rewinder is None:
            return
        try:
            target, scope = rewinder.undo_target()
        except UnknownCheckpoint as error:
            self.repl.info(str(error))
            return
        self.restore(rewinder, target, scope)

    # -- steps -----------------------------------------------------------------------------
    def rewinder(self) -> SessionRewind | None:
        try:
            return self.repl.session.rewinder()
        except ConfigError as error:  # checkpoints are off
            self.repl.error(str(error))
            return None

    def show(self, points: Sequence[Checkpoint]) -> None:
        table = Table(box=None, show_header=True, padding=(0, 2, 0, 0), header_style="dim")
        for column in ("#", "turn", "when", "files", "prompt"):
            table.add_column(column, no_wrap=column != "prompt", overflow="ellipsis")
        for number, checkpoint in reversed(list(enumerate(points, 1))):
            files = checkpoint.turn_changed_count
            table.add_row(
                str(number),
                str(checkpoint.turn),
                when(checkpoint),
                "-" if files is None else str(files),
                escape(describe(checkpoint, points)),
            )
        self.repl.console.print(table)

    def pick(self, points: Sequence[Checkpoint], answer: str | None) -> Checkpoint | None:
        if answer is None:
            answer = self.ask("rewind to (number, Enter to cancel): ")
        answer = (answer or "").strip()
        if not answer:
            self.repl.info("nothing was changed")
            return None
        number = ascii_number(answer)
        if number is None or not 1 <= number <= len(points):
            self.repl.error(f"no checkpoint {answer!r}: give a number from the list")
            return None
        return points[number - 1]

    def pick_scope(self, answer: str | None) -> Scope | None:
        if answer is None:
            answer = self.ask("restore files, conversation or both? [both]: ")
            if answer is None:
                self.repl.info("nothing was changed")
                return None
        word = answer.strip().lower() or "both"
        if word not in SCOPE_WORDS:
            self.repl.error(f"{word!r}: answer files, conversation or both (nothing was changed)")
            return None
        return SCOPE_WORDS[word]

    def restore(self, rewinder: SessionRewind, target: Checkpoint, scope: Scope) -> None:
        allowed: list[str] = []
        if scope in FILE_SCOPES:
            conflicts = rewinder.preview(target).conflicts
            if conflicts and not self.confirm_overwrite(conflicts):
                return
            allowed = [conflict.path for conflict in conflicts]
        try:
            done = self.repl.session.rewind(target, scope, allowed=allowed)
        except RestoreConflict as error:
            self.repl.error(f"{error}; nothing was changed")
            return
        except CheckpointError as error:
            self.repl.error(str(error))
            return
        self.apply(done)

    def confirm_overwrite(self, conflicts: Sequence[Conflict]) -> bool:
        self.repl.error(f"{len(conflicts)} file(s) changed outside caretz since the checkpoint:")
        for line in conflict_lines(conflicts):
            self.repl.console.print(escape(line), highlight=False)
        answer = (self.ask("overwrite them? [y/N]: ") or "").strip().lower()
        if answer in ("y", "yes"):
            return True
        self.repl.info("nothing was changed")
        return False

    def apply(self, done: Rewound) -> None:
        """Says what the rewind did (the live conversation followed the log); the turn's
        prompt is offered again."""
        parts = []
        if done.files is not None:
            count = len(done.files.changes)
            parts.append(
                f"restored {count} file{'s' if count != 1 else ''} {where_to(done.target)}"
            )
            for path, moved_to in done.files.displaced:
                self.repl.info(f"{path} was not in any checkpoint: moved to {moved_to}")
        if done.history is not None:
            parts.append(f"the conversation is back {where_to(done.target)}")
        if done.prompt:
            self.repl.draft = done.prompt
        self.repl.info(f"{'; '.join(parts)} (undo with /rewind: the newest entry)")
