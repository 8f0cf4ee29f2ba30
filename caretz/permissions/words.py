"""One shell word (a tree-sitter-bash node) as the text the shell would pass, when that is known.

Quotes and backslashes are resolved as bash resolves them. A word whose value is only
known when it runs (a variable, `$(…)`, `$'…'` with escapes, a glob, brace expansion)
keeps a `problem`: the reason, in a few words, that a rule cannot rely on it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from caretz.lazy_dataclass import lazy_dataclass

# Unquoted text that the shell expands into other words: a glob or a brace list.
_GLOB = re.compile(r"[*?]|\[[^\]]+\]")
_BRACE = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")
_QUOTED = "Q"  # stands in for quoted text in the pattern view: it never expands
_DQ_ESCAPES = {'"': '"', "\\": "\\", "$": "$", "`": "`", "\n": ""}


@lazy_dataclass(frozen=True, init=False)
class Word:
    text: str
    problem: str | None = None  # why the value is unknown until the command runs

    def __init__(self, text: str, problem: str | None = None):
        # Set as a frozen dataclass's own __init__ would, without a call per field: a line
        # of a hundred commands makes hundreds of words.
        fields = self.__dict__
        fields["text"] = text
        fields["problem"] = problem

    @property
    def known(self) -> bool:
        return self.problem is None


@lazy_dataclass
class _Pieces:
    value: list[str]
    pattern: list[str]  # unquoted text as written, quoted text as _QUOTED: what may expand
    problem: str | None = None

    def add(self, value: str, pattern: str) -> None:
        self.value.append(value)
        self.pattern.append(pattern)

    def fail(self, problem: str) -> None:
        if self.problem is None:
            self.problem = problem


def word_of(node: Any) -> Word:
    """The word a tree-sitter-bash argument node stands for."""
    kind = node.type
    if kind == "word" or kind == "number":
        return unquoted_word(_text(node))
    if kind == "raw_string":  # 'text': nothing in it expands
        return Word(_text(node)[1:-1])
    pieces = _Pieces([], [])
    _collect(node, pieces)
    value = "".join(pieces.value)
    if pieces.problem is not None:
        return Word(value, pieces.problem)
    return _expanded(value, "".join(pieces.pattern), _text(node))


@lru_cache(maxsize=4096)
def unquoted_word(text: str) -> Word:
    """The word an unquoted `word` node of this text stands for (the same in every line)."""
    if "\\" in text:
        value, pattern = _unescape_unquoted(text)
        return _expanded(value, pattern, text)
    if "*" not in text and "?" not in text and "[" not in text and "{" not in text:
        return Word(text)  # most words: nothing in them expands
    return _expanded(text, text, text)


def _expanded(value: str, pattern: str, written: str) -> Word:
    """The word, with a problem when its unquoted text is a glob or a brace list."""
    if "*" not in pattern and "?" not in pattern and "[" not in pattern and "{" not in pattern:
        return Word(value)
    shown = _cut(written)
    if _BRACE.search(pattern):
        return Word(value, f"brace expansion in {shown}")
    if _GLOB.search(pattern):
        return Word(value, f"glob expansion in {shown}")
    return Word(value)


def _collect(node: Any, pieces: _Pieces) -> None:
    kind = node.type
    text = _text(node)
    if kind in ("word", "number"):
        if "\\" in text:
            pieces.add(*_unescape_unquoted(text))
        else:
            pieces.add(text, text)
    elif kind == "raw_string":
        pieces.add(text[1:-1], _QUOTED)
    elif kind == "string":
        _collect_double_quoted(node, pieces)
    elif kind == "ansi_c_string":
        body = text[2:-1]
        if "\\" in body:
            pieces.fail(f"$'…' quoting with escapes ({_cut(text)})")
        pieces.add(body, _QUOTED)
    elif kind == "concatenation":
        end = node.start_byte
        for child in node.children:
            if child.start_byte != end:
                pieces.fail(f"text the parser skipped in {_short(node)}")
            _collect(child, pieces)
            end = child.end_byte
    else:
        pieces.fail(_unknown_value(node))
        pieces.add(text, _QUOTED)


def _collect_double_quoted(node: Any, pieces: _Pieces) -> None:
    for child in node.children:
        if child.type == '"':
            continue
        if child.type == "string_content":
            pieces.add(_unescape_double_quoted(_text(child)), _QUOTED)
        else:
            pieces.fail(_unknown_value(child))
            pieces.add(_text(child), _QUOTED)


def _unknown_value(node: Any) -> str:
    kind = node.type
    text = _cut(_text(node))
    if kind in ("simple_expansion", "expansion"):
        return f"the variable {text}"
    if kind == "command_substitution":
        return f"the output of {text}"
    if kind == "process_substitution":
        return f"process substitution {text}"
    if kind == "arithmetic_expansion":
        return f"arithmetic {text}"
    if kind == "brace_expression":
        return f"brace expansion {text}"
    return f"{kind.replace('_', ' ')} {text}"


def _unescape_unquoted(text: str) -> tuple[str, str]:
    """(value, pattern) of an unquoted word: `\\x` is x, and an escaped char never expands."""
    value: list[str] = []
    pattern: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            following = text[i + 1]
            if following != "\n":
                value.append(following)
                pattern.append(_QUOTED)
            i += 2
            continue
        value.append(char)
        pattern.append(char)
        i += 1
    return "".join(value), "".join(pattern)


def _unescape_double_quoted(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text) and text[i + 1] in _DQ_ESCAPES:
            out.append(_DQ_ESCAPES[text[i + 1]])
            i += 2
            continue
        out.append(char)
        i += 1
    return "".join(out)


def _text(node: Any) -> str:
    text: str = node.text.decode("utf-8", "replace")
    return text


def _short(node: Any) -> str:
    return _cut(_text(node))


def _cut(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
