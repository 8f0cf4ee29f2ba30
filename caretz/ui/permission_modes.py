"""Changing the permission mode at the prompt: Shift+Tab cycles it, `/plan` enters
plan mode (and sends the words after it, if any, as the prompt).

The cycle is auto → ask → plan → auto, as Claude Code's Shift+Tab goes from its
default mode through the one that accepts edits to plan mode; a session started in
another mode (read-only, yolo) keeps that mode in its cycle, after plan, so nothing
the user chose at the start is lost to a stray key, and yolo is never reached
from a session that did not start in it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from caretz.ui.session_control import SessionControl

MODE_CYCLE = ("auto", "ask", "plan")


def mode_cycle(started_in: str) -> tuple[str, ...]:
    """The modes Shift+Tab goes through in a session started in `started_in`."""
    return MODE_CYCLE if started_in in MODE_CYCLE else (*MODE_CYCLE, started_in)


def next_mode(current: str, started_in: str) -> str:
    """The mode after `current` in the cycle (the first one from a mode outside it)."""
    cycle = mode_cycle(started_in)
    if current not in cycle:
        return cycle[0]
    return cycle[(cycle.index(current) + 1) % len(cycle)]


def cycle_mode(repl: SessionControl) -> None:
    """Shift+Tab: the next mode, said in one line."""
    current = repl.session.settings.permission_mode
    repl.set_permission_mode(next_mode(current, repl.started_mode))


def plan_command(repl: SessionControl, argument: str) -> None:
    """`/plan [PROMPT]`: plan mode; PROMPT, when given, is sent in it."""
    if repl.session.settings.permission_mode != "plan":
        repl.set_permission_mode("plan")
    else:
        repl.info("permissions: plan (already)")
    if argument.strip() and repl.session.settings.permission_mode == "plan":
        repl.queued_prompt = argument.strip()
