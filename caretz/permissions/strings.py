"""The strings of a bash line: the texts a program may be handed as a command line.

Every argument, assignment value, heredoc and here-string of more than one word, as the
shell would pass it (quotes resolved), in the order written: what handed.py reads for
the commands a line hands the programs caretz does not read, and for the `$(…)` bash
itself may evaluate. A line's strings are read with the line, from its tree, where
handed.py will ask for them; any other line is parsed again when asked.
"""

from __future__ import annotations

import re
import threading
from functools import cache
from typing import TYPE_CHECKING, Any

from caretz.lazy import lazy_module
from caretz.permissions.words import word_of

if TYPE_CHECKING:
    import tree_sitter
    import tree_sitter_bash
else:
    # The parser's bindings: loaded at the first line whose strings are read.
    tree_sitter = lazy_module("tree_sitter")
    tree_sitter_bash = lazy_module("tree_sitter_bash")

# The nodes whose text a program may be handed as a command line.
_STRINGS = """
[(string) (raw_string) (ansi_c_string) (translated_string) (concatenation) (heredoc_body)
 (word)] @text
"""
_SEVERAL_WORDS = re.compile(r"[\s;|&()<>`$]")
_SEVERAL_WRITTEN = re.compile(rb"[\s;|&()<>`$\\]")  # as written: escapes may make several
_KEPT = 256  # lines whose strings are kept

_read: dict[str, tuple[str, ...]] = {}  # the last lines' strings, oldest first
_lock = threading.Lock()  # calls are checked on threads of their own


@cache
def _grammar() -> tuple[Any, Any]:
    language = tree_sitter.Language(tree_sitter_bash.language())
    return tree_sitter.Parser(language), tree_sitter.Query(language, _STRINGS)


def line_strings(line: str) -> tuple[str, ...]:
    """The strings of `line` of more than one word, in order, each once."""
    with _lock:
        found = _read.get(line)
    if found is None:
        tree = _grammar()[0].parse(line.encode("utf-8", "surrogatepass"))
        found = keep(line, tree)
    return found


def keep(line: str, tree: Any) -> tuple[str, ...]:
    """Read the strings of `line` from its tree, and keep them for `line_strings`."""
    found = _strings_of(tree)
    with _lock:
        if len(_read) >= _KEPT:
            del _read[next(iter(_read))]
        _read[line] = found
    return found


def forget() -> None:
    with _lock:
        _read.clear()


def _strings_of(tree: Any) -> tuple[str, ...]:
    captures = tree_sitter.QueryCursor(_grammar()[1]).captures(tree.root_node)
    nodes = sorted(captures.get("text", []), key=lambda node: node.start_byte)
    found: dict[str, None] = {}
    written: set[bytes] = set()
    for node in nodes:
        source = node.text
        if source is None or source in written or not _SEVERAL_WRITTEN.search(source):
            continue  # read already, or one word however it is quoted
        written.add(source)
        if node.type == "heredoc_body":
            text = source.decode("utf-8", "replace")
        elif node.type == "word" and b"\\" not in source:
            continue  # a plain word is one word
        else:
            text = word_of(node).text
        if _SEVERAL_WORDS.search(text):
            found[text] = None
    return tuple(found)
