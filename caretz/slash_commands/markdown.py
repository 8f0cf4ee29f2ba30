"""A command file's front matter: the block between two `---` lines at its top.

Only what command files use is read: `key: value` lines (a value in quotes loses them)
and lists written as `- item` lines below their key; `[a, b]` stays text, which the key
that takes a list reads (`split_list`). Keys caretz does not use are kept and ignored.
A file without front matter is all prompt.
"""

from __future__ import annotations

import re

FrontMatter = dict[str, "str | list[str]"]
_KEY = re.compile(r"^([A-Za-z][A-Za-z0-9_-]*)\s*:\s*(.*)$")
_ITEM = re.compile(r"^\s*-\s+(.*)$")


def split_front_matter(text: str) -> tuple[FrontMatter, str]:
    """(front matter, the prompt below it)."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, text
    for end, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return read_block(lines[1:end]), "\n".join(lines[end + 1 :]).lstrip("\n")
    return {}, text  # no closing line: it was never front matter


def read_block(lines: list[str]) -> FrontMatter:
    data: FrontMatter = {}
    key: str | None = None
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = _ITEM.match(line)
        if item is not None and key is not None:
            current = data.get(key)
            listed = current if isinstance(current, list) else []
            data[key] = [*listed, _unquote(item.group(1))]
            continue
        match = _KEY.match(line.strip())
        if match is None:
            continue
        key = match.group(1).lower()
        data[key] = _unquote(match.group(2))
    return data


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def split_list(text: str) -> list[str]:
    """`Bash(git add:*), Read` or `[Bash(git add:*), "Read"]` → ["Bash(git add:*)", "Read"]:
    commas inside (…) stay."""
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    return [_unquote(part) for part in _split_top_level(text) if _unquote(part)]


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(depth - 1, 0)
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        current += char
    if current.strip():
        parts.append(current.strip())
    return parts
