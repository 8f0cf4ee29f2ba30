"""A command rule (`Bash(git push:*)`) matched against one parsed command, token by token.

Allow rules are read narrowly: the rule's words must be the command's first words
(`:*` or a trailing ` *` lets more follow; a ` * ` token stands for any words).
Deny and ask rules are read broadly, so that no spelling slips past: the program
must be the same, every flag the rule names must be set, however it is spelled
(`-rf`, `-fr`, `-r -f`, `-R --force`, GNU abbreviations such as `--rec`), and the
rule's other words must appear in the same order.
"""

from __future__ import annotations

import fnmatch
import shlex
from collections.abc import Iterable
from enum import Enum
from functools import cached_property

from caretz.lazy_dataclass import lazy_dataclass
from caretz.permissions.command import Command
from caretz.permissions.words import Word


class Match(Enum):
    YES = "yes"
    NO = "no"
    UNKNOWN = "unknown"  # the command's words needed to decide are only known when it runs


_RECURSIVE = {"-r": "-r", "-R": "-r", "--recursive": "-r"}
_FORCE = {"-f": "-f", "--force": "-f"}
# How a flag can be spelled, per program (and subcommand): every spelling → one name.
FLAG_SPELLINGS: dict[str, dict[str, str]] = {
    "rm": {**_RECURSIVE, **_FORCE, "-d": "-d", "--dir": "-d", "-i": "-i", "--interactive": "-i"},
    "cp": {**_RECURSIVE, **_FORCE},
    "mv": {**_FORCE},
    "chmod": {"-R": "-R", "--recursive": "-R"},
    "chown": {"-R": "-R", "--recursive": "-R"},
    "git push": {**_FORCE, "--force-with-lease": "-f", "--force-if-includes": "-f",
                 "-d": "-d", "--delete": "-d"},
    "git clean": {**_FORCE, "-d": "-d", "-x": "-x", "-X": "-X"},
    "git checkout": {**_FORCE},
    "git branch": {"-d": "-d", "--delete": "-d", **_FORCE, "-D": "-D"},
}  # fmt: skip
# git's options that take a value before the subcommand (`git -C dir push`).
_GLOBAL_VALUE_OPTIONS = {"git": frozenset({"-C", "-c"})}
_OPERATOR_CHARS = set("();<>|&")


@lazy_dataclass(frozen=True)
class CommandPattern:
    tokens: tuple[str, ...]  # the program first; "*" stands for any words
    prefix: bool  # more words may follow

    @property
    def program(self) -> str:
        return self.tokens[0]

    def text(self) -> str:
        return " ".join(self.tokens) + (":*" if self.prefix else "")

    # -- allow: the command's words, from the start -----------------------------------
    def starts(self, command: Command) -> bool:
        """Allow reading: the rule's words are the command's words (or its first words)."""
        if command.hidden is not None or command.program is None:
            return False
        tokens, words = self.tokens, command.words
        if "*" in tokens:
            return _sequence(tokens, words, 0, 0, self.prefix)
        if len(words) < len(tokens) or (not self.prefix and len(words) > len(tokens)):
            return False
        for token, word in zip(tokens, words, strict=False):
            if word.problem is not None or not _token_equal(token, word.text):
                return False
        return True

    # -- deny and ask: the program, the flags in any spelling, the words in order ---------
    @cached_property
    def literal_program(self) -> bool:
        """Whether the program token matches only itself (no glob, not a flag cluster)."""
        program = self.program
        return not any(char in program for char in "*?[") and not _is_cluster(program)

    def names(self, program: str) -> bool:
        """Whether the rule is about this program, whatever its other words."""
        return program == self.program or (
            not self.literal_program and _token_equal(self.program, program)
        )

    def contains(self, command: Command) -> Match:
        program = command.program
        if program is None:
            return Match.UNKNOWN
        if program != self.program and (
            self.literal_program or not _token_equal(self.program, program)
        ):
            # Hidden code (a shell reading stdin), or what a program runs that caretz does
            # not read (a Makefile, a package's scripts), may run this program all the same.
            return Match.UNKNOWN if command.opaque else Match.NO
        wanted, words_wanted = self._wanted
        if not wanted:
            return Match.YES
        args = command.words[1:]
        if self._plain_words <= command.argument_texts:  # else a word is missing: no match
            key = _spelling_key(program, words_wanted, args)
            flags_wanted, long_names = self._flags(key)
            flags_set, positional = _command_flags(args, key, long_names)
            if flags_wanted <= flags_set and _in_order(words_wanted, positional):
                return Match.YES
        unknown = command.opaque or any(word.problem is not None for word in args)
        return Match.UNKNOWN if unknown else Match.NO

    @cached_property
    def _wanted(self) -> tuple[tuple[str, ...], list[str]]:
        """The rule's tokens after the program (`*` aside), and those that are not flags."""
        wanted = tuple(token for token in self.tokens[1:] if token != "*")
        return wanted, [token for token in wanted if not token.startswith("-")]

    @cached_property
    def _plain_words(self) -> frozenset[str]:
        """The rule's words that match only themselves: each must be among the command's."""
        return frozenset(word for word in self._wanted[1] if not any(c in word for c in "*?["))

    @cached_property
    def _flags_by_key(self) -> dict[str, tuple[set[str], set[str]]]:
        return {}

    def _flags(self, key: str) -> tuple[set[str], set[str]]:
        """The flags the rule sets, each in its one name, and the long options a command may
        abbreviate, as `key` (`git push`, or the program) spells them."""
        found = self._flags_by_key.get(key)
        if found is None:
            flags = _rule_flags(self._wanted[0], key)
            long_names = {name for name in FLAG_SPELLINGS.get(key, {}) if name.startswith("--")}
            found = (flags, long_names | {flag for flag in flags if flag.startswith("--")})
            if self.literal_program:  # one program: its key and its subcommand's, no more
                self._flags_by_key[key] = found
        return found


def _sequence(
    tokens: tuple[str, ...], words: tuple[Word, ...], t: int, w: int, prefix: bool
) -> bool:
    if t == len(tokens):
        return prefix or w == len(words)
    if tokens[t] == "*":
        return any(_sequence(tokens, words, t + 1, k, prefix) for k in range(w, len(words) + 1))
    if w == len(words) or not words[w].known:
        return False
    if not _token_equal(tokens[t], words[w].text):
        return False
    return _sequence(tokens, words, t + 1, w + 1, prefix)


def _token_equal(token: str, text: str) -> bool:
    if token == text:
        return True
    if token[:1] == "-" and _is_cluster(token) and _is_cluster(text):
        return sorted(token[1:]) == sorted(text[1:])  # -rf is -fr
    return ("*" in token or "?" in token or "[" in token) and fnmatch.fnmatchcase(text, token)


def _is_cluster(text: str) -> bool:
    return len(text) > 2 and text[0] == "-" and text[1] != "-" and text[1:].isalpha()


def _spelling_key(program: str, rule_words: list[str], args: tuple[Word, ...]) -> str:
    """`git push` when the rule and the command are both about git's push, else the program."""
    if not rule_words or f"{program} {rule_words[0]}" not in FLAG_SPELLINGS:
        return program
    subcommand = _subcommand(program, args)
    return f"{program} {subcommand}" if subcommand == rule_words[0] else program


def _subcommand(program: str, args: tuple[Word, ...]) -> str | None:
    takes_value = _GLOBAL_VALUE_OPTIONS.get(program, frozenset())
    skip = False
    for word in args:
        if skip:
            skip = False
            continue
        if not word.known:
            return None
        if word.text in takes_value:
            skip = True
        elif not word.text.startswith("-"):
            return word.text
    return None


def _rule_flags(tokens: Iterable[str], key: str) -> set[str]:
    spellings = FLAG_SPELLINGS.get(key, {})
    flags: set[str] = set()
    for token in tokens:
        if token.startswith("--"):
            flags.add(spellings.get(token, token))
        elif token.startswith("-") and len(token) > 1:
            flags.update(spellings.get("-" + char, "-" + char) for char in token[1:])
    return flags


def _command_flags(
    args: tuple[Word, ...], key: str, long_names: set[str]
) -> tuple[set[str], list[str]]:
    """The flags set (each in its one name) and the other words, up to `--` for flags."""
    spellings = FLAG_SPELLINGS.get(key, {})
    flags: set[str] = set()
    positional: list[str] = []
    options_end = False
    for word in args:
        if not word.known:
            continue
        text = word.text
        if options_end or not text.startswith("-") or text == "-":
            positional.append(text)
        elif text == "--":
            options_end = True
        elif text.startswith("--"):
            flags.add(_long_flag(text.split("=", 1)[0], long_names, spellings))
        else:
            flags.update(spellings.get("-" + char, "-" + char) for char in text[1:])
    return flags, positional


def _long_flag(given: str, long_names: set[str], spellings: dict[str, str]) -> str:
    """GNU tools accept any unambiguous abbreviation: `--rec` is `--recursive`."""
    if given in spellings:
        return spellings[given]
    expansions = sorted(name for name in long_names if name.startswith(given) and len(given) > 2)
    if len(expansions) == 1:
        return spellings.get(expansions[0], expansions[0])
    return given


def _in_order(wanted: list[str], words: list[str]) -> bool:
    position = 0
    for token in wanted:
        while position < len(words) and not _token_equal(token, words[position]):
            position += 1
        if position == len(words):
            return False
        position += 1
    return True


def parse_command_pattern(spec: str) -> CommandPattern:
    """`git push:*` → git, push + any words; `npm run test` → exactly those words."""
    body = spec.strip()
    prefix = body.endswith(":*")
    if prefix:
        body = body[:-2].rstrip()
    if ":*" in body:
        raise ValueError("`:*` may only end the rule, as in Bash(git push:*)")
    tokens = split_words(body)
    if not tokens:
        raise ValueError("no command before `:*`")
    if tokens[-1] == "*":
        tokens, prefix = tokens[:-1], True
    if not tokens:
        raise ValueError("write Bash for every command, not Bash(*)")
    program = tokens[0]
    if "/" in program:
        program = program.rstrip("/").rsplit("/", 1)[-1]  # /bin/rm → rm, as commands are read
    return CommandPattern((program, *tokens[1:]), prefix)


def split_words(body: str) -> list[str]:
    """A rule's command as words, quotes resolved. Raises ValueError for shell operators."""
    lexer = shlex.shlex(body, posix=True, punctuation_chars="();<>|&")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError as error:
        raise ValueError(f"cannot split the command into words ({error})") from None
    operators = [token for token in tokens if token and set(token) <= _OPERATOR_CHARS]
    if operators:
        raise ValueError(
            f"{operators[0]!r} joins commands; a rule names one command (write one per command)"
        )
    return tokens
