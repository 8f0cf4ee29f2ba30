"""Every simple command a bash command line would run, read with tree-sitter-bash.

The shell's own grammar decides what is a command: lists (`&&`, `||`, `;`, `&`),
pipelines, subshells, `$(…)`, backticks, process substitution, redirections,
function bodies, loops and conditionals all contain `command` nodes, and each one
becomes a `Command`. The parser loads on first use, not at import.
"""

from __future__ import annotations

from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

from caretz.lazy import lazy_module
from caretz.lazy_dataclass import lazy_dataclass
from caretz.permissions import strings as line_texts
from caretz.permissions.command import MAX_DEPTH, Command, Runs, walk_all
from caretz.permissions.launch import (
    STDIN_CODE,
    build_command,
    is_interpreter,
    program_changing,
    reached,
)
from caretz.permissions.plain import BUILTINS
from caretz.permissions.runner import SHELLS
from caretz.permissions.words import Word, unquoted_word, word_of
from caretz.permissions.wrappers import COMMAND_VARIABLES, harmless_variable

if TYPE_CHECKING:
    import tree_sitter
    import tree_sitter_bash
else:
    # The parser's bindings: loaded with the grammar, at the first line read.
    tree_sitter = lazy_module("tree_sitter")
    tree_sitter_bash = lazy_module("tree_sitter_bash")

SYNTAX_ERROR = "bash cannot parse it (a syntax error)"
_AFTER_IT = " may change what the commands after it run"
_REDIRECTS = frozenset({"file_redirect", "herestring_redirect", "heredoc_redirect"})
_DECLARATIONS = frozenset({"declaration_command", "unset_command"})


# Command nodes, and the statements that carry redirections written after a command
# (`cmd <<'EOF' … EOF`, `cmd > out`): both found in C, not by walking in Python.
_QUERY = """
[(command) (declaration_command) (unset_command)] @command
(redirected_statement) @redirected
(variable_assignment name: (variable_name) @assigned)
"""


@lazy_dataclass(frozen=True, kw_only=True)
class _Kinds:
    """tree-sitter-bash node kinds as the ids a node reports (`kind_id` is cheaper than
    `type`): every id a kind's name has, so an alias cannot slip past."""

    word: frozenset[int]
    name: frozenset[int]  # command_name
    assignment: frozenset[int]
    redirect: frozenset[int]
    declaration: frozenset[int]
    anonymous: frozenset[int]
    # Children read from their text and byte range alone (nothing below them is read).
    by_text: frozenset[int]

    @classmethod
    def of(cls, language: Any) -> _Kinds:
        ids: dict[str, set[int]] = {}
        anonymous = set()
        for kind in range(language.node_kind_count):
            if language.node_kind_is_named(kind):
                ids.setdefault(language.node_kind_for_id(kind), set()).add(kind)
            else:
                anonymous.add(kind)

        def named(*names: str) -> frozenset[int]:
            return frozenset().union(*(ids.get(name, ()) for name in names))

        return cls(
            word=named("word"),
            name=named("command_name"),
            assignment=named("variable_assignment"),
            redirect=named(*_REDIRECTS),
            declaration=named(*_DECLARATIONS),
            anonymous=frozenset(anonymous),
            by_text=named("word", "number", "raw_string", *_REDIRECTS) | anonymous,
        )


@cache
def _grammar() -> tuple[Any, Any, _Kinds]:
    """The parser, a query for command nodes (found in C, not by walking in Python), and
    the node kinds the reader tells apart."""
    language = tree_sitter.Language(tree_sitter_bash.language())
    query = tree_sitter.Query(language, _QUERY)
    return tree_sitter.Parser(language), query, _Kinds.of(language)


def load_parser() -> None:
    """Load the grammar now (it otherwise loads on the first command parsed)."""
    _grammar()


def forget_read() -> None:
    """Forget every line and word read so far (a benchmark times a first read)."""
    parse_command_line.cache_clear()
    line_texts.forget()
    unquoted_word.cache_clear()
    is_interpreter.cache_clear()


@lru_cache(maxsize=256)
def parse_command_line(line: str, depth: int = 0) -> tuple[Command, ...]:
    """Every command `line` would run, in the order they are written; wrappers hold what
    they run. Commands are immutable, so a line checked again (a retry) is read once."""
    if depth > MAX_DEPTH:
        hidden = f"commands nested more than {MAX_DEPTH} levels deep"
        return (Command(words=(), text=line, hidden=hidden),)
    parser, query, kinds = _grammar()
    source = line.encode("utf-8", "surrogatepass")
    tree = parser.parse(source)
    captures = tree_sitter.QueryCursor(query).captures(tree.root_node)
    found = captures.get("command", [])
    found.sort(key=lambda node: (node.start_byte, -node.end_byte))
    statements = _statements_by_first_child(captures.get("redirected", []))
    reader = _Reader(source, depth, kinds)
    commands = [
        _declaration(node)
        if node.kind_id in kinds.declaration
        else reader.command(node, statements.get(node))
        for node in found
    ]
    if len(commands) > 1:
        commands = _sourced_before_others(commands)
    commands += _state_changes(captures.get("assigned", ()))
    if tree.root_node.has_error:
        commands.append(Command(words=(), text=line, hidden=SYNTAX_ERROR))
    if (
        "$(" in line
        or "`" in line
        or any(c.runs_code is not None and not c.opaque for c in walk_all(tuple(commands)))
    ):
        line_texts.keep(line, tree)  # what the line hands them (handed.py)
    return _variables_read(commands)


def _variables_read(commands: list[Command]) -> tuple[Command, ...]:
    """`export FOO=1` may change what a program caretz reads runs (`RIPGREP_CONFIG_PATH`,
    `TAR_OPTIONS`); where the line runs none (`export X=1 && cd src && pytest`: a builtin
    and a program that runs its own code), it changes nothing caretz reads."""
    setters = {id(c) for c in commands if c.unseen is not None and c.unseen.endswith(_AFTER_IT)}
    if not setters or any(
        c.runs_code is None and c.program not in BUILTINS
        for c in walk_all(tuple(commands))
        if id(c) not in setters
    ):
        return tuple(commands)
    return tuple(c.without_unseen() if id(c) in setters else c for c in commands)


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


class _Reader:
    """Reads the simple commands of one line. A command written again is read once: a
    command of the same text whose nodes are the same as an earlier one's, kind for kind
    and byte for byte, is the same command, since nothing else of it is read. (A command
    with redirections written after it, `cmd <<EOF`, is read each time: so is its statement.)"""

    def __init__(self, source: bytes, depth: int, kinds: _Kinds):
        self.source = source
        self.depth = depth
        self.kinds = kinds
        self.first: dict[bytes, tuple[Any, Command]] = {}  # each text's first node, read
        self.shapes: dict[bytes, list[Any]] = {}  # its shape, once the text is written again

    def command(self, node: Any, statement: Any) -> Command:
        """`statement`: the redirected statement this command is the body of, or None."""
        offset = node.start_byte
        source = self.source[offset : node.end_byte]
        if statement is not None:
            return self._build(node, offset, source, statement)
        first = self.first.get(source)
        if first is None:
            command = self._build(node, offset, source, None)
            self.first[source] = (node, command)
            return command
        shape = self.shapes.get(source)
        if shape is None:
            shape = self.shapes[source] = self._shape(first[0])
        if self._shape(node) == shape:
            return first[1]
        return self._build(node, offset, source, None)

    def _shape(self, node: Any) -> list[Any]:
        """Every node under the command, in order, as its kind, start and end (relative to
        the command), and under each node read from more than its text, its child count
        and its children."""
        offset = node.start_byte
        by_text = self.kinds.by_text
        shape: list[Any] = []
        for child in node.children:
            kind = child.kind_id
            shape.append((kind, child.start_byte - offset, child.end_byte - offset))
            if kind not in by_text:
                _subtree(child.children, offset, by_text, shape)
        return shape

    def _build(self, node: Any, offset: int, source: bytes, statement: Any) -> Command:
        kinds = self.kinds
        word_kinds = kinds.word
        words: list[Word] = []
        changes_program: str | None = None
        runs_too: list[tuple[str, str]] = []  # GIT_PAGER=cat: a command the program runs
        unseen: str | None = None  # RIPGREP_CONFIG_PATH=…: what the program reads changes
        skipped: str | None = None
        position = 0
        for child in node.children:
            kind = child.kind_id
            start = child.start_byte - offset
            if start > position and skipped is None:
                gap = source[position:start]
                skipped = None if gap.isspace() else _dropped_text(gap)
            position = child.end_byte - offset
            if kind in word_kinds:  # most arguments: the word is read from its text alone
                words.append(unquoted_word(source[start:position].decode("utf-8", "replace")))
            elif kind in kinds.name:
                words.append(self._program_word(child, offset, source))
            elif kind in kinds.assignment:
                inside = child.children
                name = inside[0].text.decode("utf-8", "replace") if inside else ""
                if name in COMMAND_VARIABLES and changes_program is None:
                    value = child.child_by_field_name("value")
                    line = word_of(value) if value is not None else Word("")
                    if line.known:
                        runs_too.append((name, line.text))
                    else:
                        changes_program = f"{name}=… names a command known only when it runs"
                elif program_changing(name):
                    changes_program = f"{name}=… changes which program runs"
                elif unseen is None and not harmless_variable(name):
                    unseen = f"{name}=… may change what it runs (a variable caretz does not know)"
            elif kind not in kinds.redirect and kind not in kinds.anonymous:
                words.append(word_of(child))
        redirects = statement.children[1:] if statement is not None else []
        dropped = _dropped_after(node, statement, redirects) if redirects else None
        if dropped == "-":  # the grammar drops a lone `-` before a heredoc: stdin, as bash reads it
            words.append(Word("-"))
        text = source.decode("utf-8", "replace")
        command = build_command(tuple(words), text, self.depth, parse_command_line)
        if command.hidden is not None and redirects:
            command = _with_heredoc(command, redirects, self.depth)
        if dropped not in (None, "-"):
            skipped = skipped or f"bash reads {dropped!r} in it differently"
        # A variable changes what a program caretz reads runs; a program caretz does not
        # read runs its own code (or the project's) whatever its variables say.
        reads = command.runs_code is None
        hidden = (changes_program if reads else None) or skipped
        if hidden is None and runs_too:
            command = _with_commands_in_values(command, runs_too, self.depth)
        if hidden is not None:
            return Command(
                words=command.words,
                text=text,
                hidden=hidden,
                inner=command.inner,
                runs=command.runs,
            )
        if unseen is not None and reads:
            return command.with_unseen(unseen)
        return command

    def _program_word(self, name: Any, offset: int, source: bytes) -> Word:
        children = name.children
        if not children:
            return Word("")
        first = children[0]
        if first.kind_id in self.kinds.word:
            start, end = first.start_byte - offset, first.end_byte - offset
            return unquoted_word(source[start:end].decode("utf-8", "replace"))
        return word_of(first)


def _with_commands_in_values(
    command: Command, values: list[tuple[str, str]], depth: int
) -> Command:
    """`GIT_PAGER=cat git log` runs `cat` too: read as a command git log runs besides."""
    if command.runs is Runs.NAMED:  # the runner's allow would cover the value's command
        hidden = f"{values[0][0]}=… names a command {command.program} may run"
        return command.with_hidden(hidden)
    extra = tuple(
        reached(inner, f"{name}=…")
        for name, line in values
        for inner in parse_command_line(line, depth + 1)
    )
    runs = Runs.BESIDES if command.runs is Runs.ITSELF else command.runs
    inner = command.inner + extra
    return Command(words=command.words, text=command.text, hidden=command.hidden, inner=inner, runs=runs,
                   unseen=command.unseen, runs_code=command.runs_code,
                   carries=command.carries)  # fmt: skip


def _subtree(children: list[Any], offset: int, by_text: frozenset[int], into: list[Any]) -> None:
    """`_Reader._shape` below a node: how many children it has, then each child in turn."""
    into.append(len(children))
    for child in children:
        kind = child.kind_id
        into.append((kind, child.start_byte - offset, child.end_byte - offset))
        if kind not in by_text:
            _subtree(child.children, offset, by_text, into)


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
        return Command(
            words=command.words, text=command.text, hidden=None, inner=inner, runs=Runs.INSTEAD
        )
    why = f"{command.program} runs code given inline (a heredoc), which caretz does not read"
    return Command(words=command.words, text=command.text, unseen=why)


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
    """`export A=1 B`, `local x`, `unset y`: builtins that set variables and run nothing
    (but `export PATH=…` changes what the commands after it run)."""
    text = node.text.decode("utf-8", "replace")
    keyword = node.children[0].text.decode("utf-8", "replace")
    words = [Word(keyword)]
    hidden = unseen = None
    for child in node.children[1:]:
        value = child.text.decode("utf-8", "replace")
        has_expansion = any(_expands(grandchild) for grandchild in child.children)
        words.append(Word(value, "a value computed when it runs" if has_expansion else None))
        name = value.split("=", 1)[0]
        if keyword == "unset" or value.startswith("-"):
            continue
        if hidden is None and "=" in value and program_changing(name):
            hidden = f"{keyword} {name}=… changes what the commands after it run"
        elif unseen is None and not harmless_variable(name):
            unseen = f"{keyword} {name}{_AFTER_IT}"
    return Command(words=tuple(words), text=text, hidden=hidden, unseen=unseen)


def _state_changes(names: Any) -> list[Command]:
    """`PATH=/x:$PATH` as a statement of its own (not before a command): what the commands
    after it run changes. Prefix assignments are read with their command."""
    found = []
    for name in names:
        assignment = name.parent
        parent = assignment.parent if assignment is not None else None
        if parent is None or parent.type in ("command", "declaration_command"):
            continue
        variable = name.text.decode("utf-8", "replace")
        text = assignment.text.decode("utf-8", "replace")
        if program_changing(variable):
            hidden = f"{variable}=… changes what the commands after it run"
            found.append(Command(words=(Word(text),), text=text, hidden=hidden))
        elif not harmless_variable(variable):
            unseen = f"{variable}=…{_AFTER_IT}"
            found.append(Command(words=(Word(text),), text=text, unseen=unseen))
    return found


def _sourced_before_others(commands: list[Command]) -> list[Command]:
    """`source FILE` runs FILE's commands in this shell: they may define functions and
    aliases or change PATH, so a later name caretz reads (`git status`, `ls`, `cd`) is
    not what it seems. A later program that runs its own code anyway (`pytest`, `make`)
    is no less readable for it, and a `source` alone is a script run."""
    found = list(commands)
    for index, command in enumerate(commands):
        if command.program != "source" or command.hidden is not None:
            continue
        later = walk_all(tuple(commands[index + 1 :]))
        if any(c.runs_code is None for c in later):
            found[index] = command.with_hidden(
                "source runs a file that may change what later commands run"
            )
    return found


def _expands(node: Any) -> bool:
    if node.type in ("simple_expansion", "expansion", "command_substitution"):
        return True
    return any(_expands(child) for child in node.children)
