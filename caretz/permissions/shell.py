"""Every simple command a bash command line would run, read with tree-sitter-bash.

The shell's own grammar decides what is a command: lists (`&&`, `||`, `;`, `&`),
pipelines, subshells, `$(…)`, backticks, process substitution, redirections,
function bodies, loops and conditionals all contain `command` nodes, and each one
becomes a `Command`. The parser loads on first use, not at import.
"""

from __future__ import annotations

from functools import cache, lru_cache
from typing import Any

from caretz.permissions.command import Command
from caretz.permissions.launch import build_command, program_changing
from caretz.permissions.words import Word, word_of

MAX_DEPTH = 8  # `bash -c "bash -c '…'"` nesting followed before giving up (failing closed)
_REDIRECTS = frozenset({"file_redirect", "herestring_redirect", "heredoc_redirect"})
_DECLARATIONS = frozenset({"declaration_command", "unset_command"})


_COMMANDS_QUERY = "[(command) (declaration_command) (unset_command)] @command"


@cache
def _grammar() -> tuple[Any, Any]:
    """The parser and a query for command nodes (found in C, not by walking in Python)."""
    import tree_sitter
    import tree_sitter_bash

    language = tree_sitter.Language(tree_sitter_bash.language())
    return tree_sitter.Parser(language), tree_sitter.Query(language, _COMMANDS_QUERY)


def load_parser() -> None:
    """Load the grammar now (it otherwise loads on the first command parsed)."""
    _grammar()


@lru_cache(maxsize=256)
def parse_command_line(line: str, depth: int = 0) -> tuple[Command, ...]:
    """Every command `line` would run, in the order they are written; wrappers hold what
    they run. Commands are immutable, so a line checked again (a retry) is read once."""
    if depth > MAX_DEPTH:
        hidden = f"commands nested more than {MAX_DEPTH} levels deep"
        return (Command((), line, hidden=hidden),)
    import tree_sitter

    parser, query = _grammar()
    tree = parser.parse(line.encode("utf-8", "surrogatepass"))
    found = tree_sitter.QueryCursor(query).captures(tree.root_node).get("command", [])
    found.sort(key=lambda node: (node.start_byte, -node.end_byte))
    commands = [
        _declaration(node) if node.type in _DECLARATIONS else _simple_command(node, depth)
        for node in found
    ]
    if tree.root_node.has_error:
        commands.append(Command((), line, hidden="bash cannot parse it (a syntax error)"))
    return tuple(commands)


def _simple_command(node: Any, depth: int) -> Command:
    source: bytes = node.text
    text = source.decode("utf-8", "replace")
    children = node.children
    words: list[Word] = []
    changes_program: str | None = None
    for child in children:
        kind = child.type
        if kind == "variable_assignment":
            name = child.children[0].text.decode("utf-8", "replace") if child.children else ""
            if program_changing(name):
                changes_program = f"{name}=… changes which program runs"
        elif kind == "command_name":
            words.append(word_of(child.children[0]) if child.children else Word(""))
        elif kind not in _REDIRECTS and child.is_named:
            words.append(word_of(child))
    command = build_command(tuple(words), text, depth, parse_command_line)
    hidden = changes_program or _skipped_text(source, node.start_byte, children)
    if hidden is not None:
        return Command(command.words, text, hidden, command.inner, command.runs)
    return command


def _skipped_text(source: bytes, offset: int, children: list[Any]) -> str | None:
    """Text between a command's parts that the grammar dropped (bash would not drop it)."""
    position = 0
    for child in children:
        start = child.start_byte - offset
        if start > position:
            gap = source[position:start].replace(b"\\\n", b"")
            if gap.strip():
                shown = gap.decode("utf-8", "replace").strip()
                return f"bash reads {shown!r} in it differently"
        position = child.end_byte - offset
    return None


def _declaration(node: Any) -> Command:
    """`export A=1 B`, `local x`, `unset y`: builtins that set variables and run nothing."""
    text = node.text.decode("utf-8", "replace")
    keyword = node.children[0].text.decode("utf-8", "replace")
    words = [Word(keyword)]
    for child in node.children[1:]:
        value = child.text.decode("utf-8", "replace")
        has_expansion = any(_expands(grandchild) for grandchild in child.children)
        words.append(Word(value, "a value computed when it runs" if has_expansion else None))
    return Command(tuple(words), text)


def _expands(node: Any) -> bool:
    if node.type in ("simple_expansion", "expansion", "command_substitution"):
        return True
    return any(_expands(child) for child in node.children)
