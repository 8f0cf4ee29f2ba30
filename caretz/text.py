"""Shortening text for lines people and models read, and matching names against globs.
A leaf: imports nothing from caretz."""

from __future__ import annotations

import fnmatch


def shorten(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, ending in "…" when cut."""
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)].rstrip() + "…"


def one_line(text: str, limit: int | None = None) -> str:
    """`text` with every run of white space (newlines included) folded to one space,
    then shortened to `limit` characters when a limit is given."""
    line = " ".join(text.split())
    return line if limit is None else shorten(line, limit)


def plural(count: int, noun: str) -> str:
    """'1 tool call', '2 tool calls', '0 tool calls'."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def glob_matches(name: str, pattern: str) -> bool:
    """`fnmatch.fnmatchcase(name, pattern)`; a pattern whose literal start `name` lacks is
    not compiled (tables of model globs are checked at every start)."""
    cut = min((i for i in (pattern.find(c) for c in "*?[") if i >= 0), default=len(pattern))
    return name.startswith(pattern[:cut]) and fnmatch.fnmatchcase(name, pattern)
