"""Claude Code's two inline forms in a command's prompt: `!`command`` and `@path`.

`shell_spans` finds each `!` immediately followed by a backtick-quoted command (`!`, a
backtick, one or more characters that are not a backtick, a backtick), the form Claude
Code runs before it sends the prompt; a backtick span without the `!` is text, and so
is a `!` anywhere else. `file_mentions` finds each word that starts with `@` (at the
start of the prompt or after white space), outside those spans. This module only reads
the text; running and reading what they name is app/command_expansion.py's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_SHELL = re.compile(r"!`([^`]+)`")
_MENTION = re.compile(r"(?<!\S)@(\S+)")
# What may follow a path in prose ("see @notes.txt." or "(@notes.txt)").
_TRAILING = ".,;:!?)]}'\""


@dataclass(frozen=True)
class ShellSpan:
    start: int
    end: int
    command: str


@dataclass(frozen=True)
class FileMention:
    token: str  # as written after the `@`
    candidates: tuple[str, ...]  # the paths it may name, the whole token first


def shell_spans(text: str) -> list[ShellSpan]:
    """Each `!`command`` in `text`, in order; one whose command is blank is not one."""
    return [
        ShellSpan(match.start(), match.end(), match.group(1).strip())
        for match in _SHELL.finditer(text)
        if match.group(1).strip()
    ]


def replace_spans(text: str, spans: Sequence[ShellSpan], outputs: Sequence[str]) -> str:
    """`text` with each span replaced by its command's output."""
    pieces, last = [], 0
    for span, output in zip(spans, outputs, strict=True):
        pieces += [text[last : span.start], output]
        last = span.end
    return "".join([*pieces, text[last:]])


def file_mentions(text: str) -> list[FileMention]:
    """Each distinct `@word` outside the `!` spans, in order of first appearance."""
    blanked = text
    for span in shell_spans(text):
        blanked = blanked[: span.start] + " " * (span.end - span.start) + blanked[span.end :]
    found: dict[str, FileMention] = {}
    for match in _MENTION.finditer(blanked):
        token = match.group(1)
        if token in found:
            continue
        trimmed = token.rstrip(_TRAILING)
        candidates = (token, trimmed) if trimmed and trimmed != token else (token,)
        found[token] = FileMention(token, candidates)
    return list(found.values())


def with_files(text: str, files: Sequence[tuple[str, str]]) -> str:
    """The prompt, then each (path, contents) as a `<file path="…">` block after it."""
    blocks = [f'<file path="{path}">\n{contents}\n</file>' for path, contents in files]
    return "\n\n".join([text.rstrip(), *blocks]) if blocks else text
