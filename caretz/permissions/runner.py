"""A program caretz does not read, and the commands its text hands it.

A program neither on the list of those known to run nothing else (plain.py) nor read
further by a reader (the wrappers, shells, git, find, sed, awk…) runs code caretz does
not read: its own or the project's (a script, a Makefile, a test suite, a package's
scripts). No rule reaches into that code: the project's code can do anything whatever
the rules say, and the sandbox and the network policy are what hold it. What rules do
reach is what the command's *text* hands the program:

- each argument where a program could start begins a command the program may run with
  the words after it (`prlimit --nofile=9 git push`, `docker run img git push`,
  `python wrap.py sh -c '…'`): it is kept as a command the program `carries`. A rule for
  its program could match, whatever words it ends up with; a program caretz reads
  further is read (a shell's `-c` line, a wrapper's command) and what it runs is held
  the same way. An argument known only when it runs may be any program; a path of the
  project's (`./x`, `tests/`) is the project's code, no program a rule names;
- code given inline: an interpreter's code options (`python -c`, `perl -e`, `node -p`,
  `ruby -e`, `php -r`…: `_INTERPRETERS`), and for any program an option named like one
  (`-c`, `-e`, `--eval`, `--exec`, `--command`…) whose value is more than a plain word
  (`psql -c 'select 1'`, `nix-shell --run '…'`): caretz does not read the language, so
  the command is `unseen`, and any deny or ask rule could match what it runs;
- every string of the line, its arguments of more than one word among them, is read as
  a command line when the line is checked against rules (handed.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from caretz.permissions.command import MAX_DEPTH, Command, program_name
from caretz.permissions.plain import from_system
from caretz.permissions.words import Word

# The command some words run, read `depth` levels down (launch.build_command).
Build = Callable[[tuple[Word, ...], str, int], Command]
# Whether caretz reads a program's arguments further (a wrapper, a shell, git, an
# interpreter, a plain program with options that run one): its command is then built.
ReadsFurther = Callable[[str], bool]

_SHOWN = 6  # words kept after a carried program's name, to say what it is handed
MAX_CARRIED = 64  # commands read from one command's arguments before giving up (fail closed)
# A value that is more than one plain word: code or a command line, not a name or a path.
_NOT_PLAIN = re.compile(r"[\s;|&()<>$`'\"\\{}\[\]*?!]")
# Options that, in any program, name the code it runs (with a value that is not plain).
_CODE_OPTIONS = ("-c", "-e", "--eval", "--exec", "--execute", "--command", "--cmd", "--code",
                 "--run")  # fmt: skip
# Text in a computed word's last part that makes its program's name unknown.
_COMPUTED = re.compile(r"[$`*?\[{(<>]")
_ANY = Word("", "any program")
# Files that are the standard input or another descriptor the line itself feeds.
_STDIN_FILES = (
    "/dev/stdin",
    "/dev/fd/",
    "/proc/self/fd/",
    "/dev/tty",
)  # a computed argument that could name any program


@dataclass(frozen=True, kw_only=True)
class Interpreter:
    """How an interpreter's short options read: which take code, which a value."""

    code: str  # letters whose option is code (`-c CODE`, `-cCODE`, in a cluster: `-Bc`)
    value: str = ""  # letters that take a value (the rest of the word, or the next word)
    attached: str = ""  # letters whose value can only be attached (perl's -i.bak)
    long_code: frozenset[str] = frozenset()  # long options that are code
    code_values: str = ""  # letters whose value is code when it is not plain (perl -M)
    ends: str = ""  # letters after whose value the options end (python -m: a module runs)


_INTERPRETERS = {
    "python": Interpreter(code="c", value="WXm", ends="m"),
    "node": Interpreter(code="ep", value="r", long_code=frozenset({"--eval", "--print"})),
    "perl": Interpreter(code="eE", value="IMm", attached="ilx0CdD", code_values="Mm"),
    "ruby": Interpreter(code="e", value="CEFIr", attached="KiWx0T"),
    "php": Interpreter(code="rRBEa", value="cdfzSt"),
    "lua": Interpreter(code="e", value="l"),
    "R": Interpreter(code="e"),
    "julia": Interpreter(
        code="eE", value="CJLtp", attached="Og", long_code=frozenset({"--eval", "--print"})
    ),  # fmt: skip
    "osascript": Interpreter(code="e", value="ls"),
    "tcl": Interpreter(code=""),
    "pwsh": Interpreter(code=""),
    "deno": Interpreter(code=""),
}
_SHELL = Interpreter(code="c", value="oO")  # `bash -o pipefail x.sh`
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "yash", "fish"})
_FAMILY = re.compile(
    r"(?P<python>(?:python|pypy)[0-9.]*)|(?P<node>node|nodejs|bun)|(?P<perl>perl[0-9.]*)"
    r"|(?P<ruby>ruby[0-9.]*)|(?P<php>php[0-9.]*)|(?P<lua>lua[0-9.]*|luajit)"
    r"|(?P<R>Rscript|R)|(?P<julia>julia)|(?P<osascript>osascript)"
    r"|(?P<tcl>(?:tclsh|wish)[0-9.]*)|(?P<pwsh>pwsh|powershell)|(?P<deno>deno)"
)
_PWSH_CODE = frozenset({"-c", "-command", "-commandwithargs", "-cwa", "-e", "-ec",
                        "-encodedcommand"})  # fmt: skip


def interpreter_family(program: str) -> str | None:
    """python, node, perl, ruby, php, lua, R, julia, osascript, tcl, pwsh, deno: the
    interpreters whose arguments may be code; None for any other program."""
    found = _FAMILY.fullmatch(program)
    return found.lastgroup if found is not None else None


def runner(
    words: tuple[Word, ...], text: str, why: str, depth: int, build: Build, reads: ReadsFurther
) -> Command:
    """A program caretz does not read (`why`), with the commands its arguments form."""
    program, args = words[0].text, words[1:]
    code = interpreter_code(program, args)
    if code is not None:
        return Command(words=words, text=text, unseen=code, runs_code=why)
    script = _script_at(program, args)
    if script is not None and script < len(args) and _given_by_the_line(args[script]):
        hidden = f"{program} runs code the line gives it ({args[script].text or '…'})"
        return Command(words=words, text=text, hidden=hidden, runs_code=why)
    carries, unseen = _carried(program, args, script, text, depth, build, reads)
    return Command(words=words, text=text, unseen=unseen, runs_code=why, carries=carries)


def _carried(
    program: str,
    args: tuple[Word, ...],
    script: int | None,
    text: str,
    depth: int,
    build: Build,
    reads: ReadsFurther,
) -> tuple[tuple[Command, ...], str | None]:
    """The commands the arguments form, or why what they run cannot be read."""
    found: list[Command] = []
    options_are_its_own = True  # until a program caretz reads takes the words after it
    for index, word in enumerate(args):
        code = _code_option(program, args, index) if options_are_its_own else None
        if code is not None:
            return (), code
        head = _head(word) if index != script else None  # `python "$f"`: a file it runs
        if head is None:
            head = _option_value(word)  # `--program=git push`, `-Xgit push`
        if head is None:
            continue
        if head is _ANY:
            return (), f"its argument {word.problem} may name a program it runs"
        if not head.known or not reads(head.text) or not from_system(word.text):
            # Only its program matters; a few of the words after it say what it is.
            found.append(Command(words=(head, *args[index + 1 : index + 1 + _SHOWN]), text=text))
            continue
        options_are_its_own = False
        if depth + 1 > MAX_DEPTH or len(found) >= MAX_CARRIED:
            return (), "its arguments hold more commands than caretz reads"
        found.append(build((head, *args[index + 1 :]), text, depth + 1))
    return tuple(found), None


def _given_by_the_line(script: Word) -> bool:
    """`python3 <(echo …)`, `sh /dev/stdin <<< …`: the code is the line's, not a file's."""
    if not script.known:
        return (script.problem or "").startswith("process substitution")
    return script.text.startswith(_STDIN_FILES)


def _script_at(program: str, args: tuple[Word, ...]) -> int | None:
    """Where the file a shell or an interpreter runs is named (`sh x.sh`, `python -m mod`):
    that word is the file's name, not a program's."""
    if program == "source":
        return 0
    family = interpreter_family(program)
    reads = _INTERPRETERS.get(family or "") if program not in SHELLS else _SHELL
    if reads is None:
        return None
    skip = False
    for index, word in enumerate(args):
        text = word.text
        if skip or (word.known and text.startswith("--") and text != "--"):
            skip = False
            continue
        if not word.known or text == "--" or text[:1] not in ("-", "+") or text in ("-", "+"):
            return index + 1 if word.known and text == "--" else index
        letters = text[1:]
        value = next((i for i, letter in enumerate(letters) if letter in reads.value), None)
        if value is not None and letters[value] in reads.ends and value + 1 < len(letters):
            return index  # `python -mpytest`: the module is named in the same word
        skip = value is not None and value + 1 == len(letters)
        if value is not None and skip and letters[value] in reads.ends:
            return index + 1
    return None


def _head(word: Word) -> Word | None:
    """The program a command starting at this argument would run: its name (a glob for
    a file name to come, `_ANY` when it could be any), or None where none starts."""
    value = word.text
    if word.known:
        if (
            value in (".", "..")
            or value[:1] in ("", "-")
            or "=" in value
            or _NOT_PLAIN.search(value)
        ):
            return None  # an option, a setting, or a file of that odd name at most
        if "/" in value and value[0] not in "/~":
            return None  # a file of the project's (`./x`, `tests/x`): its code, no program
        return program_name(word)  # by an absolute path too: `/opt/bin/git` is git
    if value.startswith("-"):
        return None  # an option whose value is computed
    if "/" in value and value[0] != "/" and not _COMPUTED.search(value.split("/", 1)[0]):
        return None  # a relative path (`tests/*.py`, `src/$name`): the project's files
    last = value.rsplit("/", 1)[-1]
    if word.problem and word.problem.startswith("glob expansion"):
        return Word(last, word.problem)  # the names of files it matches: a rule's, maybe
    if "/" in value and last and not _COMPUTED.search(last):
        return Word(last)  # `$HOME/bin/tool`: the program's name is known
    return _ANY


def _option_value(word: Word) -> Word | None:
    """The program an option's value names (`--with=git`, `-Pgit`), if it names one."""
    text = word.text
    if not word.known or not text.startswith("-") or text.startswith("--") and "=" not in text:
        return None
    value = text.split("=", 1)[1] if "=" in text else text[2:]
    head = _head(Word(value)) if value else None
    return head if head is not None and head is not _ANY else None


def interpreter_code(program: str, args: tuple[Word, ...]) -> str | None:
    """Why these arguments give an interpreter code to run inline, or None."""
    family = interpreter_family(program)
    if family == "pwsh":
        for word in args:
            if not word.known or word.text.lower() in _PWSH_CODE:
                return f"{program} {word.text or '…'} runs code given inline"
    elif family == "deno":
        first = next((w for w in args if not (w.known and w.text.startswith("-"))), None)
        if first is not None and (not first.known or first.text == "eval"):
            return f"{program} eval runs code given inline"
    elif family is not None:
        return _interpreter_code(program, _INTERPRETERS[family], args)
    return None


def _interpreter_code(program: str, reads: Interpreter, args: tuple[Word, ...]) -> str | None:
    """The interpreter's own code option, read up to its script (or python's -m module)."""
    skip = False
    for word in args:
        if skip:
            skip = False
            continue
        if not word.known:
            return None if not word.text.startswith("-") else f"{program}'s options are computed"
        text = word.text
        if text == "--" or text == "-" or not text.startswith("-"):
            return None  # the script (or standard input): the options end
        if text.startswith("--"):
            if text.split("=", 1)[0] in reads.long_code:
                return f"{program} {text.split('=', 1)[0]} runs code given inline"
            continue
        for position, letter in enumerate(text[1:], start=1):
            rest = text[position + 1 :]
            if letter in reads.code:
                return f"{program} -{letter} runs code given inline"
            if letter in reads.code_values and rest and _NOT_PLAIN.search(rest):
                return f"{program} -{letter} runs code given inline"
            if letter in reads.value:
                skip = not rest
                if letter in reads.ends:
                    return None  # `python -m pytest -c x`: the rest is the module's
                break
            if letter in reads.attached:
                break
    return None


def _code_option(program: str, args: tuple[Word, ...], index: int) -> str | None:
    """Whether the option at `index` is named like code (`-c`, `--eval`…) and given more
    than a plain word."""
    word = args[index]
    if not word.known or not word.text.startswith("-"):
        return None
    text = word.text
    for option in _CODE_OPTIONS:
        if text == option:
            value = args[index + 1] if index + 1 < len(args) else None
        elif option[1] == "-" and text.startswith(option + "="):
            value = Word(text[len(option) + 1 :])
        elif option[1] != "-" and text.startswith(option) and len(text) > 2:
            value = Word(text[2:])
        else:
            continue
        if value is not None and (not value.known or _NOT_PLAIN.search(value.text)):
            return f"{program} {option} is given code caretz does not read"
    return None
