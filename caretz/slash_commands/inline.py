"""Claude Code's two inline forms in a command's prompt: `!`command`` and `@path`.

`shell_spans` finds each `!` immediately followed by a backtick-quoted command (`!`, a
backtick, one or more characters that are not a backtick, a backtick), the form Claude
Code runs before it sends the prompt; a backtick span without the `!` is text, and so
is a `!` anywhere else. `file_mentions` finds each word that starts with `@` (at the
start of the prompt or after white space), outside those spans. This module only reads
the text; running and reading what they name is app/command_expansion.py's.

`resource_mentions` finds Claude Code's MCP resource form, `@server:scheme://path` (a
server name, a colon, then a URI with a scheme and `://`); such a word is never a file
mention. An address (`me@example.com`) is neither: the `@` must start the word.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_SHELL = re.compile(r"!`([^`]+)`")
_MENTION = re.compile(r"(?<!\S)@(\S+)")
# What may follow a path in prose ("see @notes.txt." or "(@notes.txt)").
_TRAILING = ".,;:!?)]}'\""
_RESOURCE = re.compile(r"([A-Za-z0-9][A-Za-z0-9_.-]*):([A-Za-z][A-Za-z0-9+.-]*://\S*)")


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


@dataclass(frozen=True)
class ResourceMention:
    server: str
    uri: str

    @property
    def shown(self) -> str:
        return f"@{self.server}:{self.uri}"


def file_mentions(text: str) -> list[FileMention]:
    """Each distinct `@word` outside the `!` spans, in order of first appearance; a
    resource mention is none."""
    found: dict[str, FileMention] = {}
    for token in _mention_words(text):
        if token in found or _resource(token) is not None:
            continue
        trimmed = token.rstrip(_TRAILING)
        candidates = (token, trimmed) if trimmed and trimmed != token else (token,)
        found[token] = FileMention(token, candidates)
    return list(found.values())


def resource_mentions(text: str) -> list[ResourceMention]:
    """Each distinct `@server:scheme://path` outside the `!` spans, in order; a trailing
    full stop or bracket of the prose around it left out."""
    found: dict[ResourceMention, None] = {}
    for token in _mention_words(text):
        mention = _resource(token)
        if mention is not None:
            found.setdefault(mention)
    return list(found)


def _mention_words(text: str) -> list[str]:
    blanked = text
    for span in shell_spans(text):
        blanked = blanked[: span.start] + " " * (span.end - span.start) + blanked[span.end :]
    return [match.group(1) for match in _MENTION.finditer(blanked)]


def _resource(token: str) -> ResourceMention | None:
    match = _RESOURCE.fullmatch(token.rstrip(_TRAILING))
    if match is None or match.group(2).endswith("://"):
        return None
    return ResourceMention(match.group(1), match.group(2))


def with_files(text: str, files: Sequence[tuple[str, str]]) -> str:
    """The prompt, then each (path, contents) as a `<file path="…">` block after it."""
    blocks = [f'<file path="{path}">\n{contents}\n</file>' for path, contents in files]
    return "\n\n".join([text.rstrip(), *blocks]) if blocks else text
