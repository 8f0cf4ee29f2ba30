"""A simple command a shell line would run, as rules see it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from enum import Enum
from functools import cached_property

from caretz.lazy_dataclass import lazy_dataclass
from caretz.permissions.words import Word

# How deep commands inside commands are followed (`bash -c "bash -c '…'"`, a command's
# arguments read as a command) before giving up, failing closed.
MAX_DEPTH = 8


class Runs(Enum):
    """How a command relates to the commands it runs (`Command.inner`)."""

    ITSELF = "itself"  # a plain command: runs nothing else we can see
    INSTEAD = "instead"  # a wrapper that runs its inner command(s): timeout, env, bash -c, xargs
    AS_OTHER_USER = "as-other-user"  # sudo, doas, su: needs its own allow
    BESIDES = "besides"  # does its own work and runs more: find -exec, find -delete, trap, alias
    NAMED = "named"  # runs the command its words name: npx jest, ssh host cmd (either allow)


@lazy_dataclass(frozen=True, init=False, kw_only=True)
class Command:
    words: tuple[Word, ...]  # the program, reduced to its name (/bin/rm → rm), then its arguments
    text: str  # as written, for messages
    hidden: str | None = None  # set when what it runs cannot be seen before it runs: why
    inner: tuple[Command, ...] = ()
    runs: Runs = Runs.ITSELF
    via: str = ""  # how an inner command is reached: "bash -c", "find -exec", "find -delete"…
    # Set when what the command's own text says it runs cannot be read (code given inline,
    # an editor's `:!`, an argument known only when it runs where a program could start):
    # why. Unlike `hidden`, the command itself is seen, so an allow rule naming it covers
    # it; a deny or ask rule for any program could match what it runs.
    unseen: str | None = None
    # Set for a program caretz does not read (a script, a Makefile, a test suite, any
    # program not known to run nothing else): why. The code it runs is its own or the
    # project's, which no rule reads and the sandbox holds; what its text hands it is
    # read: `carries` (runner.py), and the line's text (handed.py).
    runs_code: str | None = None
    # The commands its arguments form (`prlimit --nofile=9 git push` carries `git push`),
    # which it may run with other words: a rule for their program could match.
    carries: tuple[Command, ...] = ()

    def __init__(
        self,
        *,
        words: tuple[Word, ...],
        text: str,
        hidden: str | None = None,
        inner: tuple[Command, ...] = (),
        runs: Runs = Runs.ITSELF,
        via: str = "",
        unseen: str | None = None,
        runs_code: str | None = None,
        carries: tuple[Command, ...] = (),
    ):
        # Set as a frozen dataclass's own __init__ would, without a call per field; the
        # program is read for every rule, so it is worked out here, once.
        self.__dict__.update(
            words=words, text=text, hidden=hidden, inner=inner, runs=runs, via=via,
            unseen=unseen, runs_code=runs_code, carries=carries,
        )  # fmt: skip
        self.__dict__["program"] = _program(words)

    @cached_property
    def program(self) -> str | None:
        """The program's name, or None when it is only known when the command runs."""
        return _program(self.words)

    @property
    def unknown(self) -> str | None:
        """Why rules cannot fully see this command (hidden code or an unknown program)."""
        if self.hidden is not None:
            return self.hidden
        if not self.words:
            return "an empty command"
        return self.words[0].problem

    @property
    def opaque(self) -> bool:
        """Whether it may run commands rules cannot see (hidden, or unseen)."""
        return self.hidden is not None or self.unseen is not None

    def reached(self, via: str) -> Command:
        """This command, as run by another (`bash -c`, `find -exec`, an alias)."""
        return self._but(via=via)

    def with_hidden(self, hidden: str) -> Command:
        return self._but(hidden=hidden)

    def with_unseen(self, unseen: str) -> Command:
        """This command, known to run what caretz cannot read (its first reason kept)."""
        return self._but(unseen=self.unseen or unseen)

    def without_unseen(self) -> Command:
        return self._but(unseen=None)

    def _but(self, **changed: object) -> Command:
        fields = {name: self.__dict__[name] for name in _FIELDS}
        return Command(**{**fields, **changed})

    @cached_property
    def argument_texts(self) -> frozenset[str]:
        """The arguments whose value is known, as text (a quick "does it say X at all")."""
        return frozenset(word.text for word in self.words[1:] if word.known)

    def walk(self) -> Iterator[Command]:
        """This command and every command it runs, depth first."""
        yield self
        for command in self.inner:
            yield from command.walk()

    def shown(self) -> str:
        """The words as one line, for messages and saved rules."""
        return " ".join(word.text or "…" for word in self.words) or self.text


_FIELDS = ("words", "text", "hidden", "inner", "runs", "via", "unseen", "runs_code", "carries")


def _program(words: tuple[Word, ...]) -> str | None:
    if not words or words[0].problem is not None:
        return None
    return words[0].text


def program_name(word: Word) -> Word:
    """`/usr/bin/rm` → `rm`, `.` → `source`: rules name programs, not paths."""
    if not word.known or ("/" not in word.text and word.text != "."):
        return word
    name = word.text.rstrip("/").rsplit("/", 1)[-1] or word.text
    return Word("source" if name == "." else name)


def walk_all(commands: tuple[Command, ...]) -> Iterator[Command]:
    for command in commands:
        yield from command.walk()


class LineParts:
    """Every command a line runs, in order (a wrapper, then what it runs), with where each
    program runs: a rule about one program need only read the commands that run it."""

    def __init__(self, commands: tuple[Command, ...]):
        flat: list[Command] = []
        _flatten(commands, flat)
        self.commands = tuple(flat)
        self._unreadable: list[int] = []
        self._at: dict[str, list[int]] = {}
        for index, command in enumerate(self.commands):
            program = command.program
            if program is None or command.opaque:
                self._unreadable.append(index)
            else:
                self._at.setdefault(program, []).append(index)

    def running(self, programs: Iterable[str]) -> list[int]:
        """The positions, in order, of the commands that run one of `programs`, and of
        those that cannot be fully read or may run what caretz does not read (they may run
        anything)."""
        found = list(self._unreadable)
        for program in programs:
            found += self._at.get(program, ())
        found.sort()
        return found


def _flatten(commands: tuple[Command, ...], into: list[Command]) -> None:
    """`walk_all` without a generator per command: a long line has a hundred."""
    for command in commands:
        into.append(command)
        if command.inner:
            _flatten(command.inner, into)
