"""What a line hands the programs caretz does not read, or bash evaluates, against rules.

A program caretz does not read (runner.py) runs its own code or the project's, which no
rule reads and the sandbox holds. What it may also run is what the line's text hands
it, and there a deny or ask rule could match; then the command asks (in `-p`, is
refused), saying what it was handed:

- a command its arguments form (`prlimit … git push`, `docker run img sh -c '…'`): a
  rule for the program it starts with, or for a program it runs in turn, could match,
  whatever other words it ends up with;
- a string of the line read as a command line (an argument of more than one word, an
  assignment's value, a heredoc, a here-string; also with printf's escapes read, and
  after an option's `=`): a command in it that a rule matches or could match, one caretz
  cannot read, or one that hands a program caretz does not read such a command. The
  line's strings count for each such program in it, since the line can write what the
  program reads (`printf 'all:\\n\\tgit push' > Makefile && make`, `echo … | frob`).
  Text bash cannot parse is read word by word: a word naming a rule's program counts.

And bash itself runs the `$(…)` of a string wherever it evaluates text as an expression
or a name (`let 'x[$(cmd)]'`, `read` then `$((x))`, `test -v`, `PS4`): a string holding
`$(…)` or a backquote is read the same way (`evaluated`), whatever else the line runs.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from caretz.permissions.command import MAX_DEPTH, Command, LineParts, program_name
from caretz.permissions.patterns import Match
from caretz.permissions.plain import from_system
from caretz.permissions.shell import SYNTAX_ERROR, parse_command_line
from caretz.permissions.strings import line_strings

if TYPE_CHECKING:
    from caretz.permissions.index import ProgramIndex
    from caretz.permissions.patterns import CommandPattern
    from caretz.permissions.rules import Rule

# (the rule, the program caretz does not read, why: what it was handed)
Handed = tuple["Rule", Command, str]
_WORDS = re.compile(r"[^\s;&|()<>{}\[\]'\"`$,=:!#]+")
_ESCAPE = re.compile(r"\\(?:x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|.)",
                     re.DOTALL)  # fmt: skip
_ESCAPED = {"n": "\n", "t": "\t", "r": "\r", "v": "\v", "f": "\f", "a": "\a", "b": "\b",
            "e": "\x1b", "E": "\x1b"}  # fmt: skip


def handed(index: ProgramIndex, legacy: list[Rule], parts: LineParts, line: str) -> list[Handed]:
    """For each program of the line caretz does not read, a rule that could match what
    the line hands it (none where nothing it is handed could match)."""
    runners: dict[int, Command] = {}
    for command in parts.commands:
        if command.runs_code is not None and not command.opaque:
            runners.setdefault(id(command), command)
    if not runners or not (index.ordered or legacy):
        return []
    check = _Check(index, legacy)
    found: list[Handed] = []
    in_line: tuple[Rule, str] | None = None
    line_read = False
    for command in runners.values():
        hit = check.carried(command.carries, strict=True)
        where = "its arguments hand it"
        if hit is None:
            if not line_read:
                in_line, line_read = check.line(line, parts, 0), True
            hit, where = in_line, "the line's text holds"
        if hit is not None:
            rule, shown = hit
            found.append((rule, command, f"{where} `{shown}`, which it may run"))
    return found


def evaluated(index: ProgramIndex, legacy: list[Rule], parts: LineParts, line: str) -> list[Handed]:
    """Text bash itself may run: a string holding `$(…)` or a backquote, which bash runs
    wherever it evaluates text as an expression or a name (`let`, `declare`, `read`,
    `printf -v`, `test -v`, `[[ … -eq … ]]`, `${!x}`, `$((x))`, a subscript, `PS4`), even
    one it reads from a pipe. A rule that could match what the text shows asks."""
    if ("$(" not in line and "`" not in line) or not (index.ordered or legacy):
        return []
    check = _Check(index, legacy)
    for string in line_strings(line):
        if "$(" not in string and "`" not in string:
            continue
        for text in _readings(string):
            found = check.text(text, 0)
            if found is not None:
                rule, shown = found
                why = f"bash may evaluate the text `{_cut(string)}`, which runs `{shown}`"
                return [(rule, Command(words=(), text=string), why)]
    return []


def _cut(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Check:
    """The rules of one behavior (deny or ask), asked about what a line hands a program."""

    def __init__(self, index: ProgramIndex, legacy: list[Rule]):
        self.index = index
        self.legacy = legacy
        self.read: set[str] = set()  # the strings read so far (one may hold itself)
        patterns = [r.command for r in index.ordered if r.command is not None]
        patterns += [p for r in legacy if r.legacy is not None for p in r.legacy.commands]
        # The programs rules name, and whether one names any (the bare `Bash`, a glob).
        self.programs = frozenset(p.program for p in patterns if p.literal_program)
        self.any_program = len(patterns) < len(index.ordered) or any(
            not p.literal_program for p in patterns
        )

    def any_rule(self) -> Rule:
        return (self.index.ordered or self.legacy)[0]

    def for_program(self, command: Command, strict: bool) -> Rule | None:
        """A rule that could match a command run with this one's program, whatever words
        it is given. `strict`: any rule where the program or what it runs cannot be read
        (what a command's own arguments hand it); else only a rule naming a program the
        text shows (what a string of the line holds: data that parses as commands,
        often code in another language, hides nothing it does not show)."""
        program = command.program
        if command.opaque and strict:
            return self.any_rule()
        if program is None:
            word = command.words[0] if command.words else None
            if word is not None and (word.problem or "").startswith("glob expansion"):
                glob = word.text  # the names of files it matches: a rule's program's, maybe
                return self._named(
                    lambda rule: not rule.literal_program or fnmatch.fnmatchcase(rule.program, glob)
                )
            return self.any_rule() if strict else None
        return self._named(lambda rule: rule.names(program))

    def _named(self, test: Callable[[CommandPattern], bool]) -> Rule | None:
        """The first rule (the bare `Bash`, or one whose command passes `test`)."""
        for rule in self.index.ordered:
            if rule.command is None or test(rule.command):
                return rule
        for rule in self.legacy:
            if rule.legacy is not None and any(test(p) for p in rule.legacy.commands):
                return rule
        return None

    def carried(self, carries: tuple[Command, ...], strict: bool) -> tuple[Rule, str] | None:
        """A rule for the program of a command carried, of one it runs, or of one they
        carry in turn."""
        for carried in carries:
            for command in carried.walk():
                rule = self.for_program(command, strict)
                if rule is not None:
                    return rule, command.shown()
                found = self.carried(command.carries, strict)
                if found is not None:
                    return found
        return None

    def line(self, line: str, parts: LineParts, depth: int) -> tuple[Rule, str] | None:
        """A rule that could match a command in the line's arguments or strings."""
        if depth > MAX_DEPTH:  # no deeper: what the words show, as for code
            return self._words(line)
        found = self._suffixes(parts)
        if found is not None:
            return found
        for string in line_strings(line):
            for text in _readings(string):
                if text in self.read:
                    continue
                self.read.add(text)
                found = self.text(text, depth)
                if found is not None:
                    return found
        return None

    def text(self, text: str, depth: int) -> tuple[Rule, str] | None:
        """A command of `text` a rule matches or could match by its words, a program a
        rule names that one of them is handed, or the same in the strings inside."""
        commands = parse_command_line(text, depth + 1)
        if commands and commands[-1].hidden == SYNTAX_ERROR:
            return self._words(text)
        parts = LineParts(commands)
        runs_text = False  # a command of it may run what its own strings hold
        for command in {id(c): c for c in parts.commands}.values():
            program = command.program
            for rule in self.index.candidates(command) if program is not None else ():
                if rule.command is None or (
                    rule.command.names(program or "")  # never None: no candidates then
                    and rule.command.contains(command) is not Match.NO
                ):
                    return rule, command.shown()
            found = self.carried(command.carries, strict=False)
            if found is not None:
                return found
            runs_text = runs_text or command.runs_code is not None or command.opaque
        for rule in self.legacy:
            assert rule.legacy is not None
            match, part = rule.legacy.find(parts)
            if match is Match.YES:
                return rule, part.shown() if part is not None else text
        return self.line(text, parts, depth + 1) if runs_text else None

    def _suffixes(self, parts: LineParts) -> tuple[Rule, str] | None:
        """A command's arguments from a program's name on (`printf '%s %s' git push`,
        `frob x git push`) that a rule matches or could match by their words."""
        programs, any_program = self.programs, self.any_program
        for command in {id(c): c for c in parts.commands}.values():
            words = command.words
            for start in range(1, len(words)):
                word = words[start]
                text = word.text
                if not text or text[0] == "-" or not word.known:
                    continue
                if not any_program and text.rsplit("/", 1)[-1] not in programs:
                    continue
                head = program_name(word)
                rules = self.index.candidates(Command(words=(head,), text=""))
                named = [r for r in self.legacy if r.legacy and r.legacy.names(head.text)]
                tail = Command(words=(head, *words[start + 1 :]), text=command.text)
                for rule in rules:
                    if rule.command is None or rule.command.contains(tail) is not Match.NO:
                        return rule, tail.shown()
                for rule in named:
                    assert rule.legacy is not None
                    if rule.legacy.find(LineParts((tail,)))[0] is not Match.NO:
                        return rule, tail.shown()
        return None

    def _words(self, text: str) -> tuple[Rule, str] | None:
        """Text bash cannot parse (code in another language): a word naming a rule's
        program may start a command all the same."""
        for word in dict.fromkeys(_WORDS.findall(text)):
            name = word.rstrip("/").rsplit("/", 1)[-1] if "/" in word else word
            if not name or ("/" in word and not from_system(word)):
                continue
            rule = self._named(partial(_names, name=name))
            if rule is not None:
                return rule, word
        return None


def _names(pattern: CommandPattern, name: str) -> bool:
    return pattern.names(name)


def _readings(string: str) -> list[str]:
    """The string, with printf's and echo -e's escapes read, and after an option's `=`."""
    readings = [string]
    if "\\" in string:
        readings.append(_ESCAPE.sub(_unescaped, string))
    for text in list(readings):
        if "=" in text:
            readings.append(text.split("=", 1)[1])
    return readings


def _unescaped(found: re.Match[str]) -> str:
    escape = found.group()[1:]
    if escape[0] in "xuU" and len(escape) > 1:
        return chr(int(escape[1:], 16)) if int(escape[1:], 16) < 0x110000 else ""
    if escape[0] in "01234567":
        return chr(int(escape, 8))
    return _ESCAPED.get(escape, escape)
