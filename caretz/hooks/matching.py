"""Which hooks an event runs: a matcher against the tool's name (or the occasion).

As in Claude Code: "" and "*" match everything; a matcher of plain names
(`Bash`, `Edit|Write`) matches those names exactly; anything else is a regular
expression searched in the name (`mcp__github__.*`, `Notebook.*`). caretz's tools
answer to their own names and to Claude Code's (`bash` and `Bash`, `read` and `Read`),
so hook settings written for Claude Code work unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from caretz.hooks.config import HOOK_EVENTS, HookCommand, HookEvent, HookMatcher, HooksConfig

# caretz's tool → the name Claude Code gives the same tool.
CLAUDE_TOOL_NAMES = {
    "bash": "Bash",
    "read": "Read",
    "write": "Write",
    "edit": "Edit",
    "multi_edit": "MultiEdit",
    "glob": "Glob",
    "grep": "Grep",
    "task": "Task",
    "web_fetch": "WebFetch",
    "web_search": "WebSearch",
}
_PLAIN_NAMES = re.compile(r"[A-Za-z0-9_|]+")


def claude_tool_name(tool: str) -> str:
    """The name a hook sees in `tool_name`: Claude Code's for the tools it also has."""
    return CLAUDE_TOOL_NAMES.get(tool, tool)


def matches(matcher: str, *names: str) -> bool:
    """Whether `matcher` selects an occasion known by any of `names`."""
    pattern = matcher.strip()
    if pattern in ("", "*"):
        return True
    if _PLAIN_NAMES.fullmatch(pattern):
        wanted = set(pattern.split("|"))
        return any(name in wanted for name in names)
    regex = re.compile(pattern)
    return any(regex.search(name) for name in names)


@dataclass(frozen=True)
class ConfiguredHook:
    """A hook command with where it was written (for messages and events)."""

    command: HookCommand
    matcher: str
    source: str  # "profiles.json: profiles.general.hooks" or ".caretz/settings.json: hooks"

    @property
    def line(self) -> str:
        """The command line it runs."""
        return self.command.command or ""


@dataclass(frozen=True)
class HookFile:
    """The hooks of one settings file; a project's not yet approved never run."""

    config: HooksConfig
    source: str
    approved: bool = True
    approve_with: str = "caretz hooks approve"  # what approves it (a plugin's: caretz trust)


def selected(files: Iterable[HookFile], event: HookEvent, *names: str) -> Iterator[ConfiguredHook]:
    """The hooks `event` runs for an occasion named `names`, in file order (files not
    approved left out); a command written twice (in the profile and in the project) runs
    once."""
    seen: set[str] = set()
    for file in (file for file in files if file.approved):
        for group in file.config.for_event(event):
            if names and not matches(group.matcher, *names):
                continue
            yield from _new(group, file.source, seen)


def _new(group: HookMatcher, source: str, seen: set[str]) -> Iterator[ConfiguredHook]:
    for command in group.hooks:
        if command.type != "command" or command.command is None:
            continue  # another type: skipped, and said so when the session starts
        if command.command in seen:
            continue
        seen.add(command.command)
        yield ConfiguredHook(command, group.matcher, source)


def command_hooks(file: HookFile) -> list[tuple[HookEvent, ConfiguredHook]]:
    """Every command hook a file has, with its event, approved or not (to list them)."""
    return [
        (event, hook)
        for event in HOOK_EVENTS
        for group in file.config.for_event(event)
        for hook in _new(group, file.source, set())
    ]
