"""Terminal lines for checkpoint events: a snapshot's left-out files, a checkpoint
that failed, the undo line after a loop-guard stop (only when the stopped turn changed
files), and `caretz sessions show`'s line for each checkpoint and rewind."""

from __future__ import annotations

from typing import Any

from rich.markup import escape

from caretz.checkpoints.events import CREATED, FAILED, RESTORED, SETTLED
from caretz.checkpoints.notices import SCOPE_FLAGS, checkpoint_command, rewind_command
from caretz.ui.guard_lines import PREFIX

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

    def render(self, event: dict[str, Any]) -> list[str]:
        kind = event.get("type")
        if kind == "Turn.Started" and event.get("agent", "main") == "main":
            self.undo, self.stopped = None, False
        elif kind == CREATED and event.get("kind") == "turn":
            self.undo = rewind_command(str(event.get("session")), int(event.get("turn") or 0))
            return [f"[dim]{escape(event['note'])}[/]"] if event.get("note") else []
        elif kind == FAILED:
            return [f"[yellow]{escape(str(event.get('message', 'checkpoint failed')))}[/]"]
        elif kind == "LoopGuard.Stopped":
            self.stopped = True
        elif kind == SETTLED and self.stopped and self.undo is not None:
            self.stopped = False
            if event.get("changed_count"):
                return [f"[magenta]{escape(self.undo_line())}[/]"]
        return []

    def undo_line(self) -> str:
        assert self.undo is not None
        if self.interactive:
            return f"{UNDO_LABEL} /undo (files and conversation), or {self.undo}"
        return f"{UNDO_LABEL} {self.undo}"


def describe(event: dict[str, Any]) -> str | None:
    """A checkpoint event as one line of `caretz sessions show`; None for other events."""
    kind = event.get("type")
    if kind == CREATED:
        return _created(event)
    if kind == RESTORED:
        return _restored(event)
    if kind == FAILED:
        return f"[checkpoints] {event.get('message', '')}"
    return None


def _created(event: dict[str, Any]) -> str:
    short = str(event.get("id", ""))[:12]
    if event.get("kind") == "rewind":
        what = "taken before a rewind (rewinding to it undoes the rewind)"
    else:
        what = f"before turn {event.get('turn')}'s first change"
    left_out = event.get("left_out") or []
    extra = f"; left out {len(left_out)}: {', '.join(left_out)}" if left_out else ""
    return f"[checkpoint {short}] {what}{extra}"


def _restored(event: dict[str, Any]) -> str:
    scope = SCOPES.get(str(event.get("scope")), str(event.get("scope")))
    target = f"checkpoint {str(event.get('to', ''))[:12]} (turn {event.get('to_turn')})"
    changed = event.get("changes_count")
    files = f"; {changed} file(s) changed" if changed is not None else ""
    before = event.get("before")
    flag = SCOPE_FLAGS.get(str(event.get("scope")), "")
    session = str(event.get("to_session"))
    undo = f"; undo: {checkpoint_command(session, before, flag)}" if before else ""
    return f"[rewound {scope} to {target}]{files}{undo}"
