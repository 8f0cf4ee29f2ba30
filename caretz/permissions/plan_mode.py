"""Plan mode's commands: a command line runs only when every part of it is shown to
change nothing.

Plan mode runs commands in the read-only sandbox, as read-only mode does; but the
sandbox holds files only, and a command may change things elsewhere (a push to a host
the network allows, a process signalled, a package fetched). So plan mode also reads
the line on the shell's grammar (shell.py) and lets it run only when each command it
would run, wrappers and what they run included, is a program known to read and print,
without an option that writes or runs another program, and nothing is redirected into
a file. Whatever cannot be read that way (a variable as the program, a script, a
program not on the lists, a word known only when it runs where an option could hide)
is refused: plan mode fails closed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from caretz.permissions.command import Command, walk_all
from caretz.permissions.shell import parse_command_line

# Programs that only read and print whatever their arguments say: a word known only
# when it runs (a glob, a variable) cannot make them change anything.
_READERS = frozenset(
    {"cat", "head", "tail", "wc", "ls", "pwd", "echo", "printf", "grep", "egrep", "fgrep",
     "file", "stat", "du", "df", "which", "realpath", "readlink", "dirname", "basename",
     "date", "whoami", "id", "uname", "true", "false", "test", "[", "cut", "tr", "uniq",
     "nl", "cmp", "diff", "comm", "column", "od", "hexdump", "md5sum", "sha1sum",
     "sha256sum", "printenv"}
)  # fmt: skip
# Programs that read and print unless an option writes or runs a program: every word
# must be known, and none may start with one of these.
_GUARDED: dict[str, tuple[str, ...]] = {
    "sed": ("-i", "--in-place", "-s", "--separate", "-e", "--expression", "-f", "--file"),
    "sort": ("-o", "--output", "--compress-program", "-T", "--temporary-directory"),
    "rg": ("--pre", "--search-zip", "-z"),
    "tree": ("-o",),
    "find": ("-delete", "-fprint", "-fls"),  # -exec and -ok: what they run is read
    "jq": ("-f", "--from-file", "--rawfile", "--slurpfile"),
}
# git's subcommands that only read the repository and print.
_GIT_READS = frozenset(
    {"status", "log", "diff", "show", "blame", "grep", "ls-files", "ls-tree", "rev-parse",
     "describe", "shortlog", "cat-file", "rev-list", "merge-base", "whatchanged"}
)  # fmt: skip
_GIT_REFUSED = ("--output", "--ext-diff", "--textconv", "--exec", "--upload-pack")
# A redirection that writes nowhere: into /dev/null, or one descriptor onto another.
_HARMLESS_REDIRECT = re.compile(r"\d*>>?\s*/dev/null\b|\d*>&\s*[\d-]|&>>?\s*/dev/null\b")


def unproven(line: str) -> str | None:
    """None when every command `line` would run is shown to change nothing; else why
    not, in a few words."""
    if ">" in _HARMLESS_REDIRECT.sub("", line):
        return "the line may redirect output into a file"
    commands = parse_command_line(line)
    if not commands:
        return "the line runs no command caretz can read"
    return next(_problems(walk_all(commands)), None)


def _problems(commands: Iterable[Command]) -> Iterator[str]:
    for command in commands:
        problem = _problem(command)
        if problem is not None:
            yield problem


def _problem(command: Command) -> str | None:
    shown = command.shown()
    if command.unknown is not None or command.opaque or command.runs_code is not None:
        why = command.unknown or command.hidden or command.unseen or command.runs_code
        return f"caretz cannot read what `{shown}` runs ({why})"
    program = command.program or ""
    if program in _READERS and not command.inner:
        return None
    words = [word.text for word in command.words[1:] if word.known]
    if len(words) < len(command.words) - 1:
        return f"`{shown}` has a word known only when it runs"
    if program == "git" and not command.inner:
        return _git_problem(shown, words)
    refused = _GUARDED.get(program, ())
    if any(word.startswith(refused) for word in words) or _sed_writes(program, words):
        return f"`{shown}` has an option that writes or runs a program"
    if command.inner:  # what it runs is read in turn
        return None if program in _WRAPPERS else f"`{program}` runs other commands"
    return None if program in _GUARDED else f"`{program}` is not known to change nothing"


def _sed_writes(program: str, words: list[str]) -> bool:
    """Whether a sed script may write a file (its `w` and `W` commands, the `w` flag):
    read crudely, so any such letter in a script counts."""
    scripts = [word for word in words if not word.startswith("-")][:1]
    return program == "sed" and any(letter in script for script in scripts for letter in "wW")


# Wrappers that only run what they hold (each inner command is read in turn).
_WRAPPERS = frozenset({"timeout", "nice", "time", "command", "env", "xargs", "find"})


def _git_problem(shown: str, words: list[str]) -> str | None:
    while words and words[0] == "--no-pager":
        words = words[1:]
    if not words or words[0] not in _GIT_READS:
        return f"`{shown}` is not a git command that only reads"
    if any(word.startswith(_GIT_REFUSED) for word in words[1:]):
        return f"`{shown}` has an option that writes or runs a program"
    return None
