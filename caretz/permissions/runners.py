"""Programs that can run a command through their own arguments, and builtins that change
what later names run: read so that a rule sees the command, or hidden where it cannot.

`script -c CMD`, `sg GROUP -c CMD`, `npx -c CMD` and `ssh HOST CMD` run a command line:
it is read. `sed` scripts with the `e` command or flag, awk programs with `system()` or a
pipe, `tar --checkpoint-action=exec=…` (and tar's other program options), vim's `-c`/`+`
commands, gdb, expect, parallel, at, tmux, screen and ed run commands caretz cannot read
before they run: hidden, and so are the shell builtins that change which program a
later name runs (`hash -p`, `shopt -s expand_aliases`, `enable -f`). An editor's or a
pager's shell escape (`:!`, `!`) and what ssh reads from its input run commands caretz
cannot read: unseen. npm's scripts are the package's code: npm runs code caretz does
not read (runs_code), like any program it has no reader for.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable

from caretz.permissions.command import Command, Runs
from caretz.permissions.words import Word

Parse = Callable[[str, int], tuple[Command, ...]]
Builder = Callable[[tuple[Word, ...], str, int, Parse], Command]

_ALWAYS_HIDDEN = {
    "gdb": "gdb can run any command (shell, run, its scripts)",
    "lldb": "lldb can run any command (platform shell, its scripts)",
    "expect": "expect runs Tcl code that spawns commands",
    "parallel": "parallel builds the commands it runs from its arguments and input",
    "at": "at runs commands it reads from its input or a file, later",
    "batch": "batch runs commands it reads from its input, later",
    "tmux": "tmux runs commands in a server of its own",
    "screen": "screen runs commands in a session of its own",
    "ed": "ed runs the `!` commands it reads from its input",
    "red": "red runs the `!` commands it reads from its input",
    "ex": "ex runs the commands it reads from its input",
}
_VIM = frozenset({"vim", "vi", "nvim", "view", "vimdiff", "gvim", "rvim", "evim"})
_EDITOR = (
    "{} runs the commands it reads from its input and files (`:!`), which caretz does not read"
)
# Editors and pagers whose commands (a shell escape among them) come from what they read.
_ESCAPES = {
    **dict.fromkeys(("nano", "pico", "micro", "joe", "jed", "mcedit", "kak", "hx", "helix",
                     "ne", "mg", "zile"), _EDITOR),
    **dict.fromkeys(("less", "more", "most", "pg"),
                    "{} runs the `!` commands typed at it, which caretz does not read"),
}  # fmt: skip
_VIM_CODE = frozenset({"-c", "--cmd", "-S", "-s", "-u", "-U", "-e", "-E", "-es", "-Es"})
_TAR_PROGRAMS = ("--checkpoint-action", "--to-command", "--use-compress-program",
                 "--info-script", "--new-volume-script", "--rmt-command", "--rsh-command")  # fmt: skip
_SSH_WITH_VALUE = frozenset("BbcDEeFIiJLlmOoPpQRSWw")
_SSH_CODE_OPTIONS = ("proxycommand", "localcommand", "permitlocalcommand", "knownhostscommand",
                     "match", "include", "remotecommand")  # fmt: skip
_SED_SIMPLE = set("=dDgGhHlnNpPqQxzF{}")
_AWK = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})
_AWK_CODE = frozenset(
    {"--file", "--exec", "--include", "--load", "--source", "-f", "-E", "-i", "-l"}
)
_AWK_WITH_VALUE = frozenset({"-F", "-v", "--field-separator", "--assign"})
_AWK_RUNS = re.compile(r"system|\||@load|@include")  # `||` too: the check is by text


def _hidden(reason: str) -> Builder:
    return lambda words, text, depth, parse: Command(words=words, text=text, hidden=reason)


def _escapes(reason: str) -> Builder:
    return lambda words, text, depth, parse: Command(
        words=words, text=text, unseen=reason.format(words[0].text)
    )


def _body(
    words: tuple[Word, ...],
    text: str,
    depth: int,
    parse: Parse,
    body: Word,
    via: str,
    runs: Runs = Runs.INSTEAD,
) -> Command:
    if not body.known:
        return Command(words=words, text=text, hidden=f"the {via} command line is {body.problem}")
    inner = tuple(_reached(c, via) for c in parse(body.text, depth + 1))
    return Command(words=words, text=text, inner=inner, runs=runs)


def _reached(command: Command, via: str) -> Command:
    return command.reached(via)


def _option_value(args: tuple[Word, ...], names: tuple[str, ...]) -> Word | None:
    """The value of the first of `names` (`-c CMD`, `--command=CMD`, `-cCMD`), or None."""
    for index, word in enumerate(args):
        if not word.known:
            continue
        for name in names:
            if word.text == name:
                return args[index + 1] if index + 1 < len(args) else Word("")
            if name.startswith("--") and word.text.startswith(name + "="):
                return Word(word.text.split("=", 1)[1])
            if not name.startswith("--") and word.text.startswith(name) and len(word.text) > 2:
                return Word(word.text[len(name) :])
    return None


def _script(words: tuple[Word, ...], text: str, depth: int, parse: Parse) -> Command:
    """`script -c CMD [file]` runs CMD; without -c it opens a shell reading its input."""
    args = words[1:]
    body = _option_value(args, ("-c", "--command"))
    for index, word in enumerate(args):  # -qc CMD, -qcCMD
        cluster = word.text if word.known and not word.text.startswith("--") else ""
        if body is None and cluster.startswith("-") and "c" in cluster:
            after = cluster[cluster.index("c") + 1 :]
            body = Word(after) if after else (args[index + 1] if index + 1 < len(args) else None)
    if body is None:
        return Command(words=words, text=text, hidden="script opens a shell that reads its input")
    return _body(words, text, depth, parse, body, "script -c")


def _sg(words: tuple[Word, ...], text: str, depth: int, parse: Parse) -> Command:
    """`sg GROUP -c CMD` or `sg GROUP CMD…` runs the command line as another group."""
    args = words[2:]
    body = _option_value(args, ("-c",))
    if body is None:
        if not args:
            return Command(words=words, text=text, hidden="sg opens a shell that reads its input")
        unknown = next((w for w in args if not w.known), None)
        body = unknown or Word(" ".join(w.text for w in args))
    return _body(words, text, depth, parse, body, "sg", Runs.AS_OTHER_USER)


def _npx(words: tuple[Word, ...], text: str, depth: int, parse: Parse) -> Command:
    """`npx -c CMD` runs a shell line; `npx NAME …` runs NAME (a package's program, or one
    on PATH): an allow of the npx command covers it, deny rules see the program."""
    args = words[1:]
    if words[0].text in ("npm", "pnpm", "yarn"):
        if not args or not args[0].known or args[0].text not in ("exec", "x", "dlx"):
            why = (
                f"{words[0].text} runs the package's scripts and its dependencies' install scripts"
            )
            return Command(words=words, text=text, runs_code=why)
        args = args[1:]
    body = _option_value(args, ("-c", "--call"))
    if body is not None:
        return _body(words, text, depth, parse, body, f"{words[0].text} -c")
    i = 0
    while i < len(args) and args[i].known and args[i].text.startswith("-"):
        if args[i].text == "--":
            i += 1
            break
        i += 2 if args[i].text in ("-p", "--package", "-w", "--workspace") else 1
    if i >= len(args) or not args[i].known:
        return Command(words=words, text=text)
    line = " ".join(shlex.quote(w.text) for w in args[i:] if w.known)
    if any(not w.known for w in args[i:]):
        return Command(
            words=words, text=text, hidden="what npx runs depends on words known when it runs"
        )
    return _body(words, text, depth, parse, Word(line), words[0].text, Runs.NAMED)


def _ssh(words: tuple[Word, ...], text: str, depth: int, parse: Parse) -> Command:
    """`ssh [options] HOST CMD…` runs CMD on HOST: read, as a shell line (an allow of ssh
    covers it; deny rules see it). An option that runs a local command hides it."""
    args = words[1:]
    i = 0
    while i < len(args):
        word = args[i]
        if not word.known:
            return Command(
                words=words, text=text, hidden=f"ssh's arguments depend on {word.problem}"
            )
        option = word.text
        if not option.startswith("-") or option == "-":
            break
        i += 1
        for position, letter in enumerate(option[1:], start=1):
            if letter in _SSH_WITH_VALUE:
                value = option[position + 1 :] or (args[i].text if i < len(args) else "")
                if not option[position + 1 :]:
                    i += 1
                if letter == "o" and value.lower().lstrip().startswith(_SSH_CODE_OPTIONS):
                    return Command(words=words, text=text, hidden="ssh -o … runs a local command")
                if letter == "F":
                    return Command(
                        words=words, text=text, hidden="ssh -F reads a config that may run commands"
                    )
                break
    command = args[i + 1 :]
    if not command:
        why = "ssh runs on the host the commands it reads from its input"
        return Command(words=words, text=text, unseen=why)
    unknown = next((w for w in command if not w.known), None)
    body = unknown or Word(" ".join(w.text for w in command))
    return _body(words, text, depth, parse, body, "ssh", Runs.NAMED)


def _vim(words: tuple[Word, ...], text: str, depth: int, parse: Parse) -> Command:
    for word in words[1:]:
        if not word.known:
            return Command(
                words=words,
                text=text,
                hidden=f"{words[0].text}'s arguments depend on {word.problem}",
            )
        if word.text.startswith("+") or word.text in _VIM_CODE:
            return Command(
                words=words, text=text, hidden=f"{words[0].text} {word.text} runs editor commands"
            )
    return Command(words=words, text=text, unseen=_EDITOR.format(words[0].text))


def _emacs(words: tuple[Word, ...], text: str, depth: int, parse: Parse) -> Command:
    code = ("--eval", "-l", "--load", "-f", "--funcall", "-x", "--script", "--batch", "-batch")
    if any(not w.known or w.text.split("=", 1)[0] in code for w in words[1:]):
        return Command(words=words, text=text, hidden="emacs runs Lisp given in its arguments")
    return Command(words=words, text=text, unseen=_EDITOR.format("emacs"))


def _man(words: tuple[Word, ...], text: str, depth: int, parse: Parse) -> Command:
    if any(not w.known or w.text.startswith(("-P", "--pager")) for w in words[1:]):
        return Command(words=words, text=text, hidden="man -P runs the pager it names")
    return Command(words=words, text=text)


def _tar(words: tuple[Word, ...], text: str, depth: int, parse: Parse) -> Command:
    for index, word in enumerate(words[1:]):
        if not word.known:
            return Command(words=words, text=text, hidden=f"tar's options depend on {word.problem}")
        option = word.text
        given = option.split("=", 1)[0]
        if given.startswith("--") and len(given) > 3:
            if any(name.startswith(given) for name in _TAR_PROGRAMS):
                return Command(words=words, text=text, hidden=f"tar {given} runs a program")
        elif (option.startswith("-") or index == 0) and ("I" in option or "F" in option):
            return Command(words=words, text=text, hidden=f"tar {option} may name a program to run")
    return Command(words=words, text=text)


def _sed(words: tuple[Word, ...], text: str, depth: int, parse: Parse) -> Command:
    """sed's `e` command and the `e` flag of `s` run a command; `--sandbox` forbids them."""
    args = words[1:]
    if any(w.known and w.text == "--sandbox" for w in args):
        return Command(words=words, text=text)
    scripts: list[Word] = []
    first_operand = None
    i = 0
    while i < len(args):
        word = args[i]
        option = word.text if word.known else ""
        if option in ("-e", "--expression", "-f", "--file", "-l", "--line-length"):
            if option in ("-f", "--file"):
                return Command(
                    words=words, text=text, hidden="sed -f runs a script file caretz does not read"
                )
            if option in ("-e", "--expression"):
                scripts.append(args[i + 1] if i + 1 < len(args) else Word(""))
            i += 2
            continue
        if (
            option.startswith(("--expression=", "--file="))
            or option[:2] in ("-e", "-f")
            and (len(option) > 2 and not option.startswith("--"))
        ):
            if option.startswith(("-f", "--file=")):
                return Command(
                    words=words, text=text, hidden="sed -f runs a script file caretz does not read"
                )
            scripts.append(Word(option.split("=", 1)[1] if "=" in option[:13] else option[2:]))
        elif first_operand is None and (not word.known or not option.startswith("-")):
            first_operand = word
        i += 1
    if not scripts and first_operand is not None:
        scripts.append(first_operand)
    for script in scripts:
        if not script.known:
            return Command(words=words, text=text, hidden=f"sed's script is {script.problem}")
        if _sed_runs_commands(script.text):
            return Command(words=words, text=text, hidden="sed's e command runs a command line")
    return Command(words=words, text=text)


def _sed_runs_commands(script: str) -> bool:
    """Whether a sed script has an `e` command or an `s///e` flag (True where unsure)."""
    i, n = 0, len(script)
    while i < n:
        char = script[i]
        if char in " \t\n;!0123456789$,~+":
            i += 1
        elif char in "/\\":  # an address /re/ or \cREc
            delimiter = script[i + 1] if char == "\\" and i + 1 < n else "/"
            i = _past(script, i + (2 if char == "\\" else 1), delimiter)
        elif char == "e":
            return True
        elif char in "sy":
            if i + 1 >= n or script[i + 1] in "\\\n":
                return True
            delimiter = script[i + 1]
            i = _past(script, _past(script, i + 2, delimiter), delimiter)
            flags = i
            while i < n and script[i] not in ";\n}":
                i += 1
            if char == "s" and "e" in script[flags:i].split("w", 1)[0]:
                return True
        elif char in "aic":  # text to the end of the line, on while a line ends in `\`
            while i < n and (script[i] != "\n" or script[i - 1] == "\\"):
                i += 1
        elif char in "rRwWbtT:#":
            while i < n and script[i] != "\n" and (char not in "btT:" or script[i] != ";"):
                i += 1
        elif char in _SED_SIMPLE:
            i += 1
        else:
            return True  # a command caretz does not know: assume the worst
    return False


def _past(script: str, i: int, delimiter: str) -> int:
    """The index just past the next unescaped `delimiter` from `i` (the end if none)."""
    while i < len(script):
        if script[i] == "\\":
            i += 2
            continue
        if script[i] == delimiter:
            return i + 1
        i += 1
    return len(script)


def _awk(words: tuple[Word, ...], text: str, depth: int, parse: Parse) -> Command:
    """awk runs commands through `system()`, pipes (`print | "cmd"`, `"cmd" | getline`) and
    the extensions it loads; a program with none of those runs nothing else."""
    name = words[0].text
    args = words[1:]
    program: Word | None = None
    i = 0
    while i < len(args):
        word = args[i]
        option = word.text if word.known else ""
        if not word.known or option == "-" or not option.startswith("-"):
            program = word
            break
        if option == "--":
            program = args[i + 1] if i + 1 < len(args) else None
            break
        given = option.split("=", 1)[0]
        if given in _AWK_CODE or option[:2] in ("-f", "-E", "-i", "-l"):
            return Command(
                words=words,
                text=text,
                hidden=f"{name} {given} loads a program caretz does not read",
            )
        i += 2 if option in _AWK_WITH_VALUE else 1
    if program is None:
        return Command(words=words, text=text)
    if not program.known:
        return Command(words=words, text=text, hidden=f"{name}'s program is {program.problem}")
    if _AWK_RUNS.search(program.text):
        return Command(
            words=words, text=text, hidden=f"{name}'s program runs commands (system, pipes)"
        )
    return Command(words=words, text=text)


def _hash(words: tuple[Word, ...], text: str, depth: int, parse: Parse) -> Command:
    if any(not w.known or (w.text.startswith("-") and "p" in w.text) for w in words[1:]):
        return Command(words=words, text=text, hidden="hash -p makes a name run another program")
    return Command(words=words, text=text)


def _shopt(words: tuple[Word, ...], text: str, depth: int, parse: Parse) -> Command:
    if any(not w.known or w.text == "expand_aliases" for w in words[1:]):
        return Command(
            words=words, text=text, hidden="shopt expand_aliases lets later names run aliases"
        )
    return Command(words=words, text=text)


def _enable(words: tuple[Word, ...], text: str, depth: int, parse: Parse) -> Command:
    if any(not w.known or (w.text.startswith("-") and "f" in w.text) for w in words[1:]):
        return Command(
            words=words, text=text, hidden="enable -f loads a builtin from a shared library"
        )
    return Command(words=words, text=text)


BUILDERS: dict[str, Builder] = {
    **{name: _hidden(reason) for name, reason in _ALWAYS_HIDDEN.items()},
    **{name: _escapes(reason) for name, reason in _ESCAPES.items()},
    **dict.fromkeys(_VIM, _vim),
    **dict.fromkeys(_AWK, _awk),
    "emacs": _emacs,
    "man": _man,
    "script": _script,
    "sg": _sg,
    "npx": _npx,
    "bunx": _npx,
    "npm": _npx,
    "pnpm": _npx,
    "yarn": _npx,
    "ssh": _ssh,
    "tar": _tar,
    "sed": _sed,
    "hash": _hash,
    "shopt": _shopt,
    "enable": _enable,
}
