"""Every simple command a bash command line would run, read with tree-sitter-bash.

The shell's own grammar decides what is a command: lists (`&&`, `||`, `;`, `&`),
pipelines, subshells, `$(…)`, backticks, process substitution, redirections,
function bodies, loops and conditionals all contain `command` nodes, and each one
becomes a `Command`. The parser loads on first use, not at import.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from caretz.permissions.command import Command
from caretz.permissions.launch import build_command, program_changing
from caretz.permissions.words import Word, word_of

MAX_DEPTH = 8  # `bash -c "bash -c '…'"` nesting followed before giving up (failing closed)
_REDIRECTS = frozenset({"file_redirect", "herestring_redirect", "heredoc_redirect"})
_DECLARATIONS = frozenset({"declaration_command", "unset_command"})


@cache
def _parser() -> Any:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def load_parser() -> None:
    """Load the grammar now (it otherwise loads on the first command parsed)."""
    _parser()


def parse_command_line(line: str, depth: int = 0) -> tuple[Command, ...]:
    """Every command `line` would run, outermost first; wrappers hold what they run."""
    if depth > MAX_DEPTH:
        hidden = f"commands nested more than {MAX_DEPTH} levels deep"
        return (Command((), line, hidden=hidden),)
    source = line.encode("utf-8", "surrogatepass")
    tree = _parser().parse(source)
    commands: list[Command] = []
    _walk(tree.root_node, depth, commands)
    if tree.root_node.has_error:
        commands.append(Command((), line, hidden="bash cannot parse it (a syntax error)"))
    return tuple(commands)


def _walk(node: Any, depth: int, out: list[Command]) -> None:
    kind = node.type
    if kind == "command":
        out.append(_simple_command(node, depth))
    elif kind in _DECLARATIONS:
        out.append(_declaration(node))
    for child in node.children:
        _walk(child, depth, out)


def _simple_command(node: Any, depth: int) -> Command:
    text = node.text.decode("utf-8", "replace")
    words: list[Word] = []
    changes_program: str | None = None
    for child in node.children:
        if child.type == "variable_assignment":
            name = child.children[0].text.decode("utf-8", "replace") if child.children else ""
            if program_changing(name):
                changes_program = f"{name}=… changes which program runs"
        elif child.type == "command_name":
            words.append(word_of(child.children[0]) if child.children else Word(""))
        elif child.type not in _REDIRECTS and child.is_named:
            words.append(word_of(child))
    command = build_command(tuple(words), text, depth, parse_command_line)
    hidden = changes_program or _skipped_text(node)
    if hidden is not None:
        return Command(command.words, text, hidden, command.inner, command.runs)
    return command


def _skipped_text(node: Any) -> str | None:
    """Text between a command's parts that the grammar dropped (bash would not drop it)."""
    source = node.text
    position = 0
    for child in node.children:
        start = child.start_byte - node.start_byte
        gap = source[position:start].replace(b"\\\n", b"")
        if gap.strip():
            return f"bash reads {gap.decode('utf-8', 'replace').strip()!r} in it differently"
        position = child.end_byte - node.start_byte
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
