"""From a simple command's words to a `Command`, with everything it runs inside it.

Wrappers (`timeout`, `sudo`, `env`…) are unwrapped; command strings (`bash -c`, `eval`,
`su -c`, `watch`, `trap`, `alias`) are parsed in turn; `find -exec` and `xargs` yield the
commands they start, and `find -delete` counts as `rm -r -f` on its start paths: a rule on
rm is about deleting files, and `find -delete` deletes them.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from functools import lru_cache

from caretz.permissions.command import Command, Runs, program_name
from caretz.permissions.git import read_git
from caretz.permissions.plain import PLAIN, code_option, from_system
from caretz.permissions.runner import SHELLS, interpreter_family, runner
from caretz.permissions.runners import BUILDERS as RUNNERS
from caretz.permissions.words import Word
from caretz.permissions.wrappers import SPECS, is_loader, unwrap
from caretz.permissions.wrappers import program_changing as _program_changing

# Parses a command line found inside another (the body of `bash -c`) one level deeper.
Parse = Callable[[str, int], tuple[Command, ...]]

_SHELL_VALUE_OPTIONS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
_CODE_FLAGS = frozenset(
    {"-c", "-e", "-E", "-m", "-p", "-r", "--eval", "--print", "--command", "--version", "-V",
     "--help", "-h", "-v"}
)  # fmt: skip
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
# Wrappers that, given no command, run a shell (`chroot DIR`, `unshare -r`, `setarch x86_64`).
_SHELL_WHEN_EMPTY = frozenset(
    {"chroot", "unshare", "nsenter", "firejail", "fakeroot", "pkexec", "setarch", "linux32",
     "linux64", "i386", "x86_64", "uname26", "aarch64", "arm64"}
)  # fmt: skip
_STDIN_ARGUMENTS = Word("", "the arguments xargs reads from standard input")
STDIN_CODE = "reads the commands it runs from standard input"


def build_command(words: tuple[Word, ...], text: str, depth: int, parse: Parse) -> Command:
    """The command these words run, with the commands it runs in turn inside it, and for
    a program caretz does not read, the commands its arguments hand it (runner.py)."""
    command = _read(words, text, depth, parse)
    if command.runs_code is None or command.hidden is not None or command.unseen is not None:
        return command

    def build(words: tuple[Word, ...], text: str, depth: int) -> Command:
        return build_command(words, text, depth, parse)

    return runner(command.words, text, command.runs_code, depth, build, reads_further)


def reads_further(name: str) -> bool:
    """Whether caretz reads what this program runs from its arguments (a wrapper, a shell,
    git, find, an interpreter, a plain program's option that runs one)."""
    return name in _RUN_OTHERS or is_interpreter(name) or bool(PLAIN.get(name))


def _read(words: tuple[Word, ...], text: str, depth: int, parse: Parse) -> Command:
    if not words:
        return Command(words=(), text=text, hidden="an empty command")
    first = words[0]
    program = program_name(first)
    if program is not words[0]:
        words = (program, *words[1:])
    if program.problem is not None:
        return Command(words=words, text=text)
    name = program.text
    if not from_system(first.text) and not is_loader(name):
        return Command(
            words=words, text=text, runs_code=f"{first.text} is a file caretz does not read"
        )
    if name in PLAIN:
        option = code_option(name, words[1:])
        if option is not None:
            return Command(words=words, text=text, hidden=f"{name} {option} runs a command")
        return Command(words=words, text=text)  # a program known to run no other
    if name not in _RUN_OTHERS and not is_interpreter(name):
        if is_loader(name):
            return _wrapper(words, text, depth, parse, "ld.so")
        return Command(words=words, text=text, runs_code=f"caretz does not read what {name} runs")
    args = words[1:]
    if name in SHELLS:
        return _shell(words, text, depth, parse)
    if name in _BUILDERS:
        return _BUILDERS[name](words, text, depth, parse)
    if name in SPECS:
        return _wrapper(words, text, depth, parse)
    if _reads_stdin_code(args):
        return Command(words=words, text=text, hidden=f"{name} {STDIN_CODE}")
    return Command(words=words, text=text, runs_code=f"{name} runs a program caretz does not read")


def _wrapper(
    words: tuple[Word, ...], text: str, depth: int, parse: Parse, kind: str | None = None
) -> Command:
    name = words[0].text
    spec = SPECS[kind or name]
    found = unwrap(name, spec, words[1:])
    runs = Runs.AS_OTHER_USER if spec.as_other_user else Runs.INSTEAD
    if found.problem is not None:
        return Command(words=words, text=text, hidden=found.problem, runs=runs)
    if name == "xargs":
        found.command = _filled_by_xargs(words[1:], found.command)
    if found.bare_shell:
        return Command(
            words=words, text=text, hidden=f"{name} opens a shell that {STDIN_CODE}", runs=runs
        )
    inner: list[Command] = []
    if found.body is not None:
        # env -S 'rm -rf' v: the split string and the words after it make one command line.
        body = _joined(found.body, found.command)
        inner += _parse_body(body, f"{name} command line", depth, parse)
    elif found.command:
        command = found.command + ((_STDIN_ARGUMENTS,) if name == "xargs" else ())
        inner.append(reached(build_command(command, text, depth, parse), name))
    elif name == "xargs":
        inner.append(reached(Command(words=(Word("echo"), _STDIN_ARGUMENTS), text=text), name))
    elif name in _SHELL_WHEN_EMPTY and not found.command:
        return Command(
            words=words, text=text, hidden=f"{name} with no command opens a shell that {STDIN_CODE}"
        )
    runs = runs if inner else Runs.ITSELF
    # `env FOO=1 make`: a variable caretz does not know may change what a program it
    # reads runs (RIPGREP_CONFIG_PATH); one it does not read runs its own code anyway.
    unseen = found.unseen if any(c.runs_code is None for c in inner) else None
    return Command(words=words, text=text, inner=tuple(inner), runs=runs, unseen=unseen)


def _filled_by_xargs(options: tuple[Word, ...], command: tuple[Word, ...]) -> tuple[Word, ...]:
    """`xargs -I{} sh -c 'echo {}'`: each word holding the replace string is filled from
    standard input, so what it says is known only when it runs."""
    replace = None
    for index, word in enumerate(options):
        text = word.text if word.known else ""
        if text in ("-I", "--replace") and index + 1 < len(options):
            replace = options[index + 1].text if text == "-I" else "{}"
        elif text.startswith("-I") or text.startswith("--replace="):
            replace = text[2:] if text.startswith("-I") else text.split("=", 1)[1]
        elif text.startswith("-i"):
            replace = text[2:] or "{}"
        if text == "--" or (word.known and not text.startswith("-") and replace is None):
            break
    if not replace:
        return command
    filled = Word("", "the text xargs -I fills in from standard input")
    return tuple(
        Word(word.text, filled.problem) if word.known and replace in word.text else word
        for word in command
    )


def _shell(words: tuple[Word, ...], text: str, depth: int, parse: Parse) -> Command:
    """`bash -c BODY` runs BODY; `bash` with no script reads its commands from stdin."""
    name = words[0].text
    command_string = reads_stdin = interactive = False
    positional: list[Word] = []
    args = list(words[1:])
    i = 0
    while i < len(args):
        word = args[i]
        if not word.known:
            if command_string or positional:
                positional.append(word)
                i += 1
                continue
            return Command(
                words=words, text=text, hidden=f"{name}'s options depend on {word.problem}"
            )
        if positional or word.text == "-" or not word.text.startswith(("-", "+")):
            positional.append(word)
        elif word.text == "--":
            positional.extend(args[i + 1 :])
            break
        elif word.text in _SHELL_VALUE_OPTIONS:
            value = args[i + 1] if i + 1 < len(args) else Word("")
            if not value.known or value.text in ("expand_aliases", "extdebug"):
                return Command(words=words, text=text, hidden=f"{name} {word.text} {value.text or '…'} "
                               "changes what later names run")  # fmt: skip
            i += 1
        elif not word.text.startswith("--"):
            letters = word.text[1:]
            command_string = command_string or "c" in letters
            interactive = interactive or "i" in letters
            reads_stdin = reads_stdin or "s" in letters or "i" in letters
        i += 1
    if command_string:
        if not positional:  # its command line is given when it runs (`xargs sh -c`)
            return Command(words=words, text=text, hidden=f"{name} -c is given no command line")
        if interactive:
            return Command(
                words=words, text=text, hidden=f"{name} -i reads start-up files and expands aliases"
            )
        inner = _parse_body(positional[0], f"{name} -c", depth, parse)
        return Command(words=words, text=text, inner=inner, runs=Runs.INSTEAD)
    if reads_stdin or not positional or positional[0].text == "-":
        return Command(words=words, text=text, hidden=f"{name} {STDIN_CODE}")
    script = positional[0].text or "a computed path"
    return Command(words=words, text=text, runs_code=f"{name} runs the script {script}")


def _parse_body(body: Word, where: str, depth: int, parse: Parse) -> tuple[Command, ...]:
    if not body.known:
        hidden = f"the {where} is {body.problem}"
        return (Command(words=(), text=body.text, hidden=hidden, via=where),)
    return tuple(reached(command, where) for command in parse(body.text, depth + 1))


def reached(command: Command, via: str) -> Command:
    return command.reached(via)


def _reads_stdin_code(args: tuple[Word, ...]) -> bool:
    if any(word.known and word.text == "-" for word in args):
        return True
    if any(word.known and word.text in _CODE_FLAGS for word in args):
        return False
    return not any(not word.known or not word.text.startswith("-") for word in args)


def _eval(words: tuple[Word, ...], text: str, depth: int, parse: Parse) -> Command:
    unknown = next((word for word in words[1:] if not word.known), None)
    if unknown is not None:
        return Command(words=words, text=text, hidden=f"eval runs {unknown.problem}")
    body = " ".join(word.text for word in words[1:])
    inner = tuple(reached(c, "eval") for c in parse(body, depth + 1))
    return Command(words=words, text=text, inner=inner, runs=Runs.INSTEAD)


def _source(words: tuple[Word, ...], text: str, depth: int, parse: Parse) -> Command:
    if len(words) > 1 and not words[1].known:
        return Command(
            words=words, text=text, hidden=f"source of a computed path ({words[1].problem})"
        )
    return Command(words=words, text=text, runs_code="source runs the commands of a file")


def _alias(words: tuple[Word, ...], text: str, depth: int, parse: Parse) -> Command:
    """`alias x='rm -rf'`: the alias body runs later under another name, so it counts now."""
    inner: list[Command] = []
    for word in words[1:]:
        if not word.known:
            return Command(words=words, text=text, hidden=f"an alias defined from {word.problem}")
        if "=" in word.text:
            inner += _parse_body(Word(word.text.split("=", 1)[1]), "alias", depth, parse)
    return Command(words=words, text=text, inner=tuple(inner), runs=Runs.BESIDES)


def _trap(words: tuple[Word, ...], text: str, depth: int, parse: Parse) -> Command:
    args = [word for word in words[1:] if not (word.known and word.text in ("-p", "-l", "--"))]
    if len(args) < 2 or (args[0].known and args[0].text == "-"):
        return Command(words=words, text=text)
    inner = _parse_body(args[0], "trap", depth, parse)
    return Command(words=words, text=text, inner=inner, runs=Runs.BESIDES)


def _watch(words: tuple[Word, ...], text: str, depth: int, parse: Parse) -> Command:
    """watch joins its arguments and runs them with `sh -c`, unless -x (--exec) is given."""
    args = list(words[1:])
    exec_form = False
    while args and args[0].known and args[0].text.startswith("-") and args[0].text != "--":
        option = args.pop(0).text
        exec_form = exec_form or option in ("-x", "--exec")
        if option in ("-n", "--interval", "-q", "--equexit") and args:
            args.pop(0)
    if args and args[0].known and args[0].text == "--":
        args.pop(0)
    if not args:
        return Command(words=words, text=text)
    inner: tuple[Command, ...]
    if exec_form:
        inner = (reached(build_command(tuple(args), text, depth, parse), "watch"),)
    else:
        unknown = next((word for word in args if not word.known), None)
        body = unknown or Word(" ".join(word.text for word in args))
        inner = _parse_body(body, "watch command", depth, parse)
    return Command(words=words, text=text, inner=inner, runs=Runs.INSTEAD)


def _su(words: tuple[Word, ...], text: str, depth: int, parse: Parse) -> Command:
    """`su [user] -c CMD`, `runuser -u user -- CMD`; without a command, a login shell."""
    args = list(words[1:])
    for i, word in enumerate(args):
        if not word.known:
            return Command(
                words=words, text=text, hidden=f"su's arguments depend on {word.problem}"
            )
        if word.text in ("-c", "--command") and i + 1 < len(args):
            inner = _parse_body(args[i + 1], f"{words[0].text} -c", depth, parse)
            return Command(words=words, text=text, inner=inner, runs=Runs.AS_OTHER_USER)
        if word.text.startswith("--command="):
            body = Word(word.text.split("=", 1)[1])
            inner = _parse_body(body, f"{words[0].text} -c", depth, parse)
            return Command(words=words, text=text, inner=inner, runs=Runs.AS_OTHER_USER)
        if word.text == "--" and i > 0 and args[i - 1].known:
            command = tuple(args[i + 1 :])
            if command:
                inner = (reached(build_command(command, text, depth, parse), words[0].text),)
                return Command(words=words, text=text, inner=inner, runs=Runs.AS_OTHER_USER)
    return Command(
        words=words, text=text, hidden=f"{words[0].text} opens a shell that {STDIN_CODE}"
    )


def _find(words: tuple[Word, ...], text: str, depth: int, parse: Parse) -> Command:
    args = words[1:]
    while args and args[0].known and args[0].text in ("-H", "-L", "-P"):
        args = args[1:]
    starts = []
    while args and args[0].known and args[0].text[:1] not in ("-", "(", "!", ","):
        starts.append(args[0])
        args = args[1:]
    inner: list[Command] = []
    i = 0
    while i < len(args):
        word = args[i]
        if not word.known:
            hidden = f"find's expression depends on {word.problem}: it may delete or run commands"
            inner.append(Command(words=(), text=text, hidden=hidden, via="find"))
        elif word.text in _FIND_EXEC:
            end = _exec_end(args, i + 1)
            command = tuple(args[i + 1 : end])
            inner.append(reached(build_command(command, text, depth, parse), f"find {word.text}"))
            i = end
        elif word.text == "-delete":
            removed = tuple(starts) or (Word("."),)
            rm = Command(words=(Word("rm"), Word("-r"), Word("-f"), *removed), text=text)
            inner.append(reached(rm, "find -delete"))
        i += 1
    return Command(
        words=words, text=text, inner=tuple(inner), runs=Runs.BESIDES if inner else Runs.ITSELF
    )


def _exec_end(args: tuple[Word, ...], start: int) -> int:
    """Index of the `;` (or `+` right after `{}`) that ends a find -exec, else len(args)."""
    for i in range(start, len(args)):
        word = args[i]
        if word.known and word.text == ";":
            return i
        if word.known and word.text == "+" and i > start and args[i - 1].text == "{}":
            return i
    return len(args)


def _joined(body: Word, rest: tuple[Word, ...]) -> Word:
    unknown = next((word for word in (body, *rest) if not word.known), None)
    if unknown is not None:
        return unknown
    return Word(" ".join([body.text, *(shlex.quote(word.text) for word in rest)]))


@lru_cache(maxsize=512)
def is_interpreter(program: str) -> bool:
    """python, node, perl, ruby, php, lua, R, julia…: programs whose arguments may be code."""
    return interpreter_family(program) is not None


def program_changing(name: str) -> bool:
    """Whether assigning this variable before a command changes which program runs."""
    return _program_changing(name)


_BUILDERS: dict[str, Callable[[tuple[Word, ...], str, int, Parse], Command]] = {
    "eval": _eval,
    "source": _source,
    "alias": _alias,
    "trap": _trap,
    "watch": _watch,
    "su": _su,
    "runuser": _su,
    "find": _find,
    "git": read_git,
    **RUNNERS,
}
_RUN_OTHERS = frozenset(SHELLS | _BUILDERS.keys() | SPECS.keys())  # programs read further
