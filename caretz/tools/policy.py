"""What the tool registry refuses before a call runs.

A check sees the call and the tool context and either lets it through or raises
`CancelToolCall(reason)`; the registry turns the refusal into a failed result
the model reads, so a refused call never ends the turn. Today's one check is the
user's `loopGuard.detectors.disallowedTools` rules, which apply in every guard
mode, `off` included: they are a safety rule, not a judgement.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from caretz.messages import ToolCall

if TYPE_CHECKING:
    from caretz.tools.base import ToolContext

Emit = Callable[..., Any]

# The argument names tools give a file path (caretz's own tools use "path").
PATH_KEYS = ("path", "file_path", "filepath", "filename", "file", "notebook_path", "target")

# Other names people give the same tools in their rules.
_TOOL_ALIASES = {
    "terminal": "bash",
    "shell": "bash",
    "run_shell_command": "bash",
    "write_file": "write",
    "edit_file": "edit",
    "str_replace_editor": "edit",
    "read_file": "read",
}
_COMMAND_SEPARATORS = re.compile(r"&&|\|\||;|\||\n|&")
_SUBSTITUTIONS = re.compile(r"\$\(((?:[^()]|\([^()]*\))*)\)|`([^`]*)`|<\(([^()]*)\)")
_GLOB_CHARS = re.compile(r"[*?\[]")
_PREAMBLE = "[loop guard] Automated message from caretz, not from the user."


class CancelToolCall(Exception):
    """Raised by a before-call check: the call does not run, and `reason` is its result."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def path_arguments(args: dict[str, Any]) -> list[str]:
    """The file paths a call's arguments name."""
    return [args[key] for key in PATH_KEYS if isinstance(args.get(key), str)]


def _canonical_tool(name: str) -> str:
    lowered = name.strip().lower()
    return _TOOL_ALIASES.get(lowered, lowered)


def _squash(text: str) -> str:
    return " ".join(text.split())


class DisallowedTools:
    """The user's per-tool deny patterns (`loopGuard.detectors.disallowedTools`).

    For a shell command a pattern matches when it appears in the command after
    whitespace is normalized, in the whole command, in any part of it split on
    `&& || ; |`, or inside `$(…)` and backticks; quotes do not hide it. A pattern
    with `*`, `?` or `[` is a glob over those parts. For file tools a pattern is a
    glob over the path argument (the full path and the file name).

    Called as a registry check it refuses a matching call, and says so with a
    `LoopGuard.Blocked` event (detector "disallowed-tools").
    """

    def __init__(self, rules: dict[str, list[str]], emit: Emit | None = None):
        self._rules = [
            (name, _canonical_tool(name), [p for p in patterns if p.strip()])
            for name, patterns in rules.items()
        ]
        self._emit = emit

    def check(self, call: ToolCall) -> tuple[str, str] | None:
        """(rule name, pattern) of the first rule the call breaks, or None."""
        tool = _canonical_tool(call.name)
        for name, canonical, patterns in self._rules:
            if canonical != tool and not fnmatch.fnmatchcase(tool, canonical):
                continue
            for pattern in patterns:
                if _call_matches(call.arguments, pattern):
                    return name, pattern
        return None

    def __call__(self, call: ToolCall, ctx: ToolContext) -> None:
        match = self.check(call)
        if match is None:
            return
        rule, pattern = match
        reason = disallowed_reason(call.name, rule, pattern)
        if self._emit is not None:
            self._emit(
                "LoopGuard.Blocked",
                detector="disallowed-tools",
                headline=f'disallowed-tools: {call.name} matches "{pattern}"',
                tool=call.name,
                rule=rule,
                pattern=pattern,
                reason=reason,
            )
        raise CancelToolCall(reason)


def disallowed_reason(tool: str, rule: str, pattern: str) -> str:
    """The refusal of a call that matches one of the user's disallowedTools rules."""
    return (
        f"{_PREAMBLE} This {tool} call was refused and did not run: it matches "
        f'"{pattern}" in the user\'s rule loopGuard.detectors.disallowedTools.{rule}. '
        "Do not retry it or a variant of it. Do the task another way, or ask the user."
    )


def _call_matches(args: dict[str, Any], pattern: str) -> bool:
    command = args.get("command")
    if isinstance(command, str):
        return command_matches(command, pattern)
    paths = path_arguments(args)
    if paths:
        return any(path_matches(path, pattern) for path in paths)
    if pattern.strip() == "*":
        return True
    return any(isinstance(v, str) and pattern in v for v in args.values())


def command_matches(command: str, pattern: str) -> bool:
    """Whether a shell command contains the denied pattern (see DisallowedTools)."""
    wanted = _squash(pattern)
    if not wanted:
        return False
    texts = {command, re.sub(r"[\"'\\]", "", command)}
    for text in list(texts):
        for match in _SUBSTITUTIONS.finditer(text):
            texts.add(next(group for group in match.groups() if group is not None))
    parts = {_squash(text) for text in texts}
    for text in list(parts):
        parts.update(_squash(part) for part in _COMMAND_SEPARATORS.split(text))
    if _GLOB_CHARS.search(wanted):
        return any(fnmatch.fnmatchcase(part, f"*{wanted}*") for part in parts)
    return any(wanted in part for part in parts)


def path_matches(path: str, pattern: str) -> bool:
    """Whether a file path matches a glob, by full path, by file name or by path suffix."""
    normalized = posixpath.normpath(path.replace("\\", "/"))
    name = posixpath.basename(normalized)
    return (
        fnmatch.fnmatchcase(normalized, pattern)
        or fnmatch.fnmatchcase(name, pattern)
        or fnmatch.fnmatchcase(normalized, f"*/{pattern}")
    )
