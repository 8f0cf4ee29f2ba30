"""Every simple command a bash command line would run, read with tree-sitter-bash.

The shell's own grammar decides what is a command: lists (`&&`, `||`, `;`, `&`),
pipelines, subshells, `$(…)`, backticks, process substitution, redirections,
function bodies, loops and conditionals all contain `command` nodes, and each one
becomes a `Command`. The parser loads on first use, not at import.
"""

from __future__ import annotations

from functools import cache, lru_cache
from typing import Any

from caretz.permissions.command import Command, Runs
from caretz.permissions.launch import (
    SHELLS,
    STDIN_CODE,
    build_command,
    is_interpreter,
    program_changing,
    reached,
)
from caretz.permissions.words import Word, unquoted_word, word_of

MAX_DEPTH = 8  # `bash -c "bash -c '…'"` nesting followed before giving up (failing closed)
_REDIRECTS = frozenset({"file_redirect", "herestring_redirect", "heredoc_redirect"})
_DECLARATIONS = frozenset({"declaration_command", "unset_command"})


# Command nodes, and the statements that carry redirections written after a command
# (`cmd <<'EOF' … EOF`, `cmd > out`): both found in C, not by walking in Python.
_QUERY = """
[(command) (declaration_command) (unset_command)] @command
(redirected_statement) @redirected
"""


@cache
def _grammar() -> tuple[Any, Any]:
    """The parser and a query for command nodes (found in C, not by walking in Python)."""
    import tree_sitter
    import tree_sitter_bash

    language = tree_sitter.Language(tree_sitter_bash.language())
    return tree_sitter.Parser(language), tree_sitter.Query(language, _QUERY)


def load_parser() -> None:
    """Load the grammar now (it otherwise loads on the first command parsed)."""
    _grammar()


def forget_read() -> None:
    """Forget every line and word read so far (a benchmark times a first read)."""
    parse_command_line.cache_clear()
    unquoted_word.cache_clear()
    is_interpreter.cache_clear()


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
    captures = tree_sitter.QueryCursor(query).captures(tree.root_node)
    found = captures.get("command", [])
    found.sort(key=lambda node: (node.start_byte, -node.end_byte))
    statements = _statements_by_first_child(captures.get("redirected", []))
    commands = [
        _declaration(node)
        if node.type in _DECLARATIONS
        else _simple_command(node, statements.get(node), depth)
        for node in found
    ]
    if tree.root_node.has_error:
        commands.append(Command((), line, hidden="bash cannot parse it (a syntax error)"))
    return tuple(commands)


def _statements_by_first_child(statements: list[Any]) -> dict[Any, Any]:
    """Each redirected statement under the node(s) it starts with: a command there is the
    statement's body, and the statement's other children are its redirections."""
    by_child = {}
    for statement in statements:
        children = statement.children
        start = children[0].start_byte
        for child in children:
            if child.start_byte != start:
                break
            by_child[child] = statement
    return by_child


def _simple_command(node: Any, statement: Any, depth: int) -> Command:
    """`statement`: the redirected statement this command is the body of, or None."""
    source: bytes = node.text
    offset = node.start_byte
    words: list[Word] = []
    changes_program: str | None = None
    skipped: str | None = None
    position = offset
    for child in node.children:
        start = child.start_byte
        if start > position and skipped is None:
            gap = source[position - offset : start - offset]
            skipped = None if gap.isspace() else _dropped_text(gap)
        position = child.end_byte
        kind = child.type
        if kind == "word":  # most arguments: the word is read from its text alone
            raw = source[start - offset : position - offset]
            words.append(unquoted_word(raw.decode("utf-8", "replace")))
        elif kind == "variable_assignment":
            name = child.children[0].text.decode("utf-8", "replace") if child.children else ""
            if program_changing(name):
                changes_program = f"{name}=… changes which program runs"
        elif kind == "command_name":
            words.append(_program_word(child))
        elif kind not in _REDIRECTS and child.is_named:
            words.append(word_of(child))
    redirects = statement.children[1:] if statement is not None else []
    dropped = _dropped_after(node, statement, redirects) if redirects else None
    if dropped == "-":  # the grammar drops a lone `-` before a heredoc: stdin, as bash reads it
        words.append(Word("-"))
    text = source.decode("utf-8", "replace")
    command = build_command(tuple(words), text, depth, parse_command_line)
    if command.hidden is not None and redirects:
        command = _with_heredoc(command, redirects, depth)
    if dropped not in (None, "-"):
        skipped = skipped or f"bash reads {dropped!r} in it differently"
    hidden = changes_program or skipped
    if hidden is not None:
        return Command(command.words, text, hidden, command.inner, command.runs)
    return command


def _program_word(name: Any) -> Word:
    children = name.children
    if not children:
        return Word("")
    if children[0].type == "word":
        return unquoted_word(children[0].text.decode("utf-8", "replace"))
    return word_of(children[0])


def _dropped_after(node: Any, statement: Any, redirects: list[Any]) -> str | None:
    """Text between a command and its statement's first redirection (`cmd - <<EOF`)."""
    gap = statement.text[node.end_byte - statement.start_byte : redirects[0].start_byte
                         - statement.start_byte]  # fmt: skip
    text = gap.replace(b"\\\n", b"").strip()
    return text.decode("utf-8", "replace") if text else None


def _dropped_text(gap: bytes) -> str | None:
    """Text between a command's parts that the grammar dropped (bash would not drop it)."""
    gap = gap.replace(b"\\\n", b"")
    if not gap.strip():
        return None
    return f"bash reads {gap.decode('utf-8', 'replace').strip()!r} in it differently"


def _with_heredoc(command: Command, redirects: list[Any], depth: int) -> Command:
    """A shell or interpreter reading a literal heredoc runs text caretz can see."""
    if command.hidden is None or not command.hidden.endswith(STDIN_CODE):
        return command
    body = _literal_heredoc(redirects)
    if body is None:
        return command
    if command.program in SHELLS:
        inner = tuple(reached(c, "heredoc") for c in parse_command_line(body, depth + 1))
        return Command(command.words, command.text, None, inner, Runs.INSTEAD)
    return Command(command.words, command.text)


def _literal_heredoc(redirects: list[Any]) -> str | None:
    """The body of a heredoc whose delimiter is quoted (`<<'EOF'`: nothing in it expands)."""
    for redirect in redirects:
        if redirect.type != "heredoc_redirect":
            continue
        parts = {child.type: child for child in redirect.children}
        start, body = parts.get("heredoc_start"), parts.get("heredoc_body")
        if start is None or start.text[:1] not in (b"'", b'"'):
            return None
        return body.text.decode("utf-8", "replace") if body is not None else ""
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
