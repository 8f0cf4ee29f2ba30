"""A named subagent's `tools` and `disallowedTools`: limits that only narrow.

A `ToolLimit` says which of a session's tools an agent may call, in the words agent files
use (Claude Code's `Read, Grep, Glob`, `Bash(git diff:*)`, `mcp__server__tool`; GitHub
Copilot's `search`, `runCommands`; caretz's own names). It narrows twice: the registry an
agent gets holds only the tools the limit permits (`ToolRegistry.narrowed`), and it is a
before-call check that refuses any other call, and a call outside an entry's `(…)`
pattern, read in the rule grammar (caretz/permissions/rules.py). An entry caretz cannot
read permits nothing. The session's checks (hooks, rules, mode, sandbox) still follow:
a limit never lets through what they refuse.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from caretz.messages import ToolCall
from caretz.permissions.modes import agent_mode, stricter
from caretz.permissions.policy import RuleSet
from caretz.permissions.project import RuleError
from caretz.tools.base import ToolContext
from caretz.tools.policy import CancelToolCall, Proceed

if TYPE_CHECKING:
    from caretz.permissions.rules import Behavior, Rule

# A name as agent files write it (lower case) → caretz's tools of that name.
WRITTEN_NAMES: dict[str, tuple[str, ...]] = {
    "read": ("read",),
    "write": ("write",),
    "edit": ("edit", "multi_edit"),
    "multiedit": ("multi_edit",),
    "glob": ("glob",),
    "ls": ("glob",),
    "grep": ("grep",),
    "search": ("grep", "glob"),
    "bash": ("bash",),
    "shell": ("bash",),
    "terminal": ("bash",),
    "execute": ("bash",),
    "runcommands": ("bash",),
    "task": ("task",),
    "agent": ("task",),
    "todowrite": ("todo",),
    "bashoutput": ("job_output",),
    "killshell": ("job_stop",),
    "killbash": ("job_stop",),
    "webfetch": ("web_fetch",),
    "fetch": ("web_fetch",),
    "websearch": ("web_search",),
}


@dataclass(frozen=True, kw_only=True)
class ToolLimit:
    """What one agent may call; `who` names it in a refusal ("the agent 'reviewer'")."""

    who: str
    allowed: tuple[str, ...] | None = None  # caretz names or MCP globs; None: every tool
    denied: tuple[str, ...] = ()
    patterns: Mapping[str, RuleSet] = field(default_factory=dict)  # tool → allow rules
    denied_patterns: RuleSet | None = None
    unread: tuple[str, ...] = ()  # entries that name no tool caretz knows

    def permits(self, name: str) -> bool:
        """Whether the agent may call the tool `name` at all."""
        if any(_names(pattern, name) for pattern in self.denied):
            return False
        return self.allowed is None or any(_names(pattern, name) for pattern in self.allowed)

    def __call__(self, call: ToolCall, ctx: ToolContext) -> Proceed | None:
        if not self.permits(call.name):
            raise CancelToolCall(self.refusal(call.name))
        args = call.arguments if isinstance(call.arguments, dict) else {}
        rules = self.patterns.get(call.name)
        if rules is not None and rules.check(call.name, args, ctx.workspace).outcome != "allow":
            raise CancelToolCall(self.refusal(call.name, "this call is outside its pattern"))
        denied = self.denied_patterns
        if denied is not None and denied.check(call.name, args, ctx.workspace).outcome == "deny":
            raise CancelToolCall(self.refusal(call.name, "its disallowedTools name this call"))
        return None

    def refusal(self, tool: str, why: str = "") -> str:
        allowed = (
            ", ".join(self.allowed)
            if self.allowed is not None
            else "all but " + ", ".join(self.denied)
        )
        because = f": {why}" if why else ""
        return (
            f"Not run: {self.who} may not call {tool}{because} (its tools: {allowed or 'none'}). "
            "Do the job with the tools it has, or report what you could not do."
        )


def tool_limit(
    who: str,
    tools: Iterable[str] | None,
    disallowed: Iterable[str],
    project_root: Path,
    source: str,
) -> ToolLimit:
    """The limit an agent file's `tools` and `disallowedTools` set (`source`: the file)."""
    allowed: list[str] | None = None
    unread: list[str] = []
    patterns: dict[str, list[Rule | None]] = {}
    if tools is not None:
        allowed = []
        for entry in tools:
            names, rule = _entry(entry, "allow", source)
            if not names:
                unread.append(entry)
            for name in names:
                if rule is None:
                    patterns[name] = [None]  # a bare name: every call of the tool
                elif patterns.get(name) != [None]:
                    patterns.setdefault(name, []).append(rule)
            allowed += [name for name in names if name not in allowed]
    denied: list[str] = []
    deny_rules: list[Rule] = []
    for entry in disallowed:
        names, rule = _entry(entry, "deny", source)
        if rule is None:
            denied += names  # a bare name, or a pattern caretz cannot read: the whole tool
        else:
            deny_rules.append(rule)
    return ToolLimit(
        who=who,
        allowed=tuple(allowed) if allowed is not None else None,
        denied=tuple(denied),
        patterns={
            name: RuleSet([rule for rule in rules if rule is not None], project_root)
            for name, rules in patterns.items()
            if None not in rules
        },
        denied_patterns=RuleSet(deny_rules, project_root) if deny_rules else None,
        unread=tuple(unread),
    )


def _entry(entry: str, behavior: Behavior, source: str) -> tuple[list[str], Rule | None]:
    """(the tools `entry` names, its rule when it has a `(…)` pattern). A pattern caretz
    cannot read names no tool where it allows, and the whole tool where it denies."""
    text = entry.strip()
    base = text.split("(", 1)[0].strip()
    names = _caretz_names(base)
    if "(" not in text or not names:
        return names, None
    # The rule reader (tree-sitter's grammar) only for an agent whose entries have patterns.
    from caretz.permissions.rules import parse_rule

    try:
        rule = parse_rule(text, behavior, source, frozenset(names))
    except RuleError:
        return ([] if behavior == "allow" else names), None
    return names, rule


def _caretz_names(written: str) -> list[str]:
    lowered = written.lower()
    if lowered.startswith("mcp__"):
        return [written]
    if lowered in WRITTEN_NAMES:
        return list(WRITTEN_NAMES[lowered])
    known = {name for names in WRITTEN_NAMES.values() for name in names}
    return [lowered] if lowered in known else []


def _names(pattern: str, tool: str) -> bool:
    if pattern.startswith("mcp__"):
        return fnmatch.fnmatchcase(tool, pattern) or tool.startswith(pattern + "__")
    return pattern == tool


def agent_floor(written: str | None, inherited: str | None) -> str | None:
    """A subagent's mode floor: the stricter of its file's `permissionMode` (Claude Code's
    words or caretz's) and the floor of the agent that started it. Raises ModeError."""
    if written is None:
        return inherited
    mode = agent_mode(written)
    return stricter(mode, inherited)


def rules_at(rules: RuleSet | None, root: Path) -> RuleSet | None:
    """`rules` with their `./` paths read from `root` (a subagent's worktree)."""
    return None if rules is None else RuleSet(rules.rules, root, rules.home)
