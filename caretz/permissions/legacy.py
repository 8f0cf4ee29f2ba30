"""The loop guard's `disallowedTools` patterns, read as deny rules that cannot be slipped past.

Each documented meaning is kept or made stricter:

- a shell pattern (`"rm -rf"`, `"git push --force"`) names a program, flags and words:
  it denies that program with those flags in any spelling and those words in order,
  wherever the program runs (after `&&`, in `$(…)`, `bash -c`, behind `sudo`, `timeout`,
  `xargs`, as `/bin/rm`, and `find -delete` for rm). It no longer matches inside other
  words: `"rm"` no longer refuses `npm run format` or `ls platform/`;
- a pattern of several commands (`"curl * | sh"`) denies a line that runs each of them,
  in that order; a `*` word stands for any words;
- a pattern that does not start with a program (`"/etc/passwd"`, `"--force"`) denies any
  command with those words in a row;
- a file pattern (`"*.env"`, `"secrets/*"`) is an fnmatch glob over the path, its name or
  a suffix, as before, now also compared with the path made absolute, relative to the
  project and with symlinks resolved; `write` patterns also cover `edit`, `read` patterns
  also cover glob and grep;
- for other tools, `"*"` denies every call and anything else a string in the arguments.
"""

from __future__ import annotations

import bisect
import fnmatch
import re
from collections.abc import Callable, Sequence

from caretz.lazy_dataclass import lazy_dataclass
from caretz.permissions.command import Command, LineParts
from caretz.permissions.paths import LegacyGlob
from caretz.permissions.patterns import CommandPattern, Match, parse_command_pattern, split_words

_PROGRAM = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+\-]*")
_SEPARATORS = re.compile(r"\|\||&&|[|;&\n]")


@lazy_dataclass(frozen=True, kw_only=True)
class LegacyPattern:
    text: str
    commands: tuple[CommandPattern, ...] = ()  # every one must run, in this order
    mentions: tuple[str, ...] = ()  # words a command must hold in a row
    path: LegacyGlob | None = None
    substring: str | None = None

    def find(self, parts: LineParts) -> tuple[Match, Command | None]:
        """Whether a parsed command line breaks this pattern, and the part that does."""
        commands = parts.commands
        if self.mentions:
            return _first(commands, self._mentioned)
        unknown: Command | None = None  # the first part that could match, if none does
        first_part = None
        position = 0
        for pattern in self.commands:
            found = None
            for index in _may_run(pattern, parts, position):
                match = pattern.contains(commands[index])
                if match is Match.YES:
                    found = index
                    break
                if match is Match.UNKNOWN and unknown is None:
                    unknown = commands[index]
            if found is None:
                return (Match.UNKNOWN, unknown) if unknown is not None else (Match.NO, None)
            first_part = first_part or commands[found]
            position = found + 1
        return Match.YES, first_part  # every command of the pattern runs, in order

    def names(self, program: str) -> bool:
        """Whether one of the pattern's commands runs this program."""
        return any(pattern.names(program) for pattern in self.commands)

    def _mentioned(self, command: Command) -> Match:
        texts = [word.text for word in command.words]
        size = len(self.mentions)
        for start in range(len(texts) - size + 1):
            if all(
                _word_matches(token, text)
                for token, text in zip(self.mentions, texts[start:], strict=False)
            ):
                return Match.YES
        unknown = command.opaque or command.unknown is not None
        unknown = unknown or any(not w.known for w in command.words)
        return Match.UNKNOWN if unknown else Match.NO


def _may_run(pattern: CommandPattern, parts: LineParts, start: int) -> Sequence[int]:
    """The positions from `start` on where `pattern` may match (elsewhere it cannot)."""
    if not pattern.literal_program:
        return range(start, len(parts.commands))
    positions = parts.running((pattern.program,))
    return positions[bisect.bisect_left(positions, start) :]


def _word_matches(token: str, text: str) -> bool:
    return token == text or fnmatch.fnmatchcase(text, token)


def _first(
    commands: Sequence[Command], test: Callable[[Command], Match]
) -> tuple[Match, Command | None]:
    unknown = None
    for command in commands:
        match = test(command)
        if match is Match.YES:
            return Match.YES, command
        if match is Match.UNKNOWN and unknown is None:
            unknown = command
    return (Match.UNKNOWN, unknown) if unknown is not None else (Match.NO, None)


def shell_pattern(text: str) -> LegacyPattern:
    """A `disallowedTools.bash` pattern. Raises ValueError when it cannot be split into words."""
    parts = [part.strip() for part in _SEPARATORS.split(text) if part.strip()]
    if not parts:
        raise ValueError("the pattern is empty")
    first = split_words(parts[0])
    if len(parts) == 1 and first and not _PROGRAM.fullmatch(first[0]):
        return LegacyPattern(text=text, mentions=tuple(first))
    return LegacyPattern(text=text, commands=tuple(parse_command_pattern(part) for part in parts))


def file_pattern(text: str) -> LegacyPattern:
    return LegacyPattern(text=text, path=LegacyGlob(text.strip()))


def argument_pattern(text: str) -> LegacyPattern:
    return LegacyPattern(text=text, substring=text)
