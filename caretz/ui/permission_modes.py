"""The permission mode at the prompt: `/permissions` shows it and the rules, or switches
it; Shift+Tab cycles it; `/plan` enters plan mode (and sends the words after it, if any,
as the prompt).

The cycle is auto → ask → plan → auto, as Claude Code's Shift+Tab goes from its
default mode through the one that accepts edits to plan mode; a session started in
another mode (read-only, yolo) keeps that mode in its cycle, after plan, so nothing
the user chose at the start is lost to a stray key, and yolo is never reached
from a session that did not start in it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table

from caretz.permissions.modes import PERMISSION_MODES

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


def change_permissions(repl: SessionControl, argument: str) -> None:
    if argument:
        repl.set_permission_mode(argument)
        return
    permissions = repl.session.permissions
    mode = repl.session.settings.permission_mode
    repl.info(f"permissions: {mode} (switch with /permissions {'|'.join(PERMISSION_MODES)})")
    if permissions is None:
        return
    rules = sorted(permissions.rules.rules, key=lambda rule: _ORDER[rule.behavior])
    if not rules:
        repl.info(f"no rules (add them to {permissions.settings_file} or a profile)")
        return
    table = Table(box=None, show_header=True, padding=(0, 2, 0, 0), header_style="dim")
    for column in ("", "rule", "from"):
        table.add_column(column)
    for rule in rules:
        colour = {"deny": "red", "ask": "yellow", "allow": "green"}[rule.behavior]
        table.add_row(f"[{colour}]{rule.behavior}[/]", escape(rule.text), escape(rule.source))
    repl.console.print(table)
    repl.info(f"project rules are read from {permissions.settings_file} when a session starts")


_ORDER = {"deny": 0, "ask": 1, "allow": 2}
