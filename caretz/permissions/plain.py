"""Programs known to run no other command: the list that lets a command be read as itself.

A deny rule on `git push` holds only where caretz sees every command a line runs. Each
program named here runs nothing but itself, except through the options listed beside it
(`rg --pre CMD`, `sort --compress-program=CMD`, `zip -TT CMD`): with one of those the
command is hidden. A program caretz reads further (a wrapper, a shell, git, find, sed, tar,
awk, xargs…) is read by its own reader. Every other program runs code caretz does not
read (its Makefile, a package's scripts, a test suite's code, plugins): no rule reaches
into that code, and what the command's text hands it is read instead (runner.py).

A program on this list runs nothing besides itself whatever its arguments say: one
wrongly on it would let the commands its arguments name through, so the list names only
programs whose every way of running another is known. A program reached by a path
outside the system's own directories (`./ls`, a venv's `bin/git`) is not the program of
that name: it is a file caretz does not read (`from_system`).
"""

from __future__ import annotations

from collections.abc import Iterable

from caretz.permissions.words import Word

_NONE: tuple[str, ...] = ()
_BUILTINS = (
    ": cd pushd popd dirs read set shift wait exit return break continue local declare "
    "typeset readonly export unset let umask ulimit type jobs times getopts help unalias"
)


def _each(names: str) -> dict[str, tuple[str, ...]]:
    return dict.fromkeys(names.split(), _NONE)


# program → the options with which it runs a command (long ones also match abbreviated).
PLAIN: dict[str, tuple[str, ...]] = {
    # files and directories
    **_each(
        "ls dir vdir cat tac nl head tail wc cut paste join comm fold fmt rev expand unexpand "
        "column tr uniq shuf seq numfmt od hexdump xxd base64 base32 basenc strings md5sum "
        "sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum sum tee stat file du df "
        "tree mkdir rmdir touch cp mv rm ln chmod chown chgrp truncate mktemp mkfifo dd "
        "realpath readlink basename dirname pwd cmp iconv dos2unix unix2dos csplit"
    ),
    "install": ("--strip-program",),
    "sort": ("--compress-program",),
    "split": ("--filter",),
    "diff": _NONE,
    "diff3": ("--diff-program",),
    "grep": _NONE,
    "egrep": _NONE,
    "fgrep": _NONE,
    "rg": ("--pre",),
    # archives and compression
    **_each("gzip gunzip zcat bzip2 bunzip2 bzcat xz unxz xzcat zstd unzstd zstdcat lz4 unzip"),
    "zip": ("-TT", "--unzip-command"),
    # text and data
    "echo": _NONE,
    "printf": _NONE,
    "jq": _NONE,
    # the machine, processes, time
    **_each(
        "true false test [ sleep date cal id whoami groups uname hostname arch nproc "
        "printenv which whereis locale tput clear free uptime ps pgrep kill pkill killall "
        "sync"
    ),
    # the network, reading only
    "curl": _NONE,
    "wget": ("--use-askpass",),
    # formatters and linters that load no code of the project's
    "ruff": _NONE,
    "gofmt": _NONE,
    "shellcheck": _NONE,
    "clang-format": _NONE,
    # shell builtins that run nothing (bash's `command`, `exec`, `eval`, `source`, `trap`,
    # `alias`, `hash`, `enable`, `shopt` are read elsewhere; `fc`, `bind -x` and
    # `compgen -C` run commands and are not here)
    **_each(_BUILTINS),
    "mapfile": ("-C",),  # the callback it evaluates every -c lines
    "readarray": ("-C",),
}
# The shell's builtins that run nothing whatever the environment says (a variable can
# change what an external program reads, never what `cd` or `echo` does).
BUILTINS = frozenset(_BUILTINS.split()) | {"echo", "printf", "true", "false", "test", "[",
                                           "pwd", "kill", "mapfile", "readarray"}  # fmt: skip

# Where a program named on the list is the system's own (a bare name is found on PATH).
SYSTEM_DIRECTORIES = ("/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/")


def from_system(program: str) -> bool:
    """Whether a program as written is found on PATH (a bare name) or in a system directory
    (`/usr/bin/git`), not one of the project's (`./git`, `.venv/bin/pytest`)."""
    if "/" not in program:
        return True
    return program.startswith(SYSTEM_DIRECTORIES) and "/../" not in program and "/./" not in program


def code_option(name: str, args: Iterable[Word]) -> str | None:
    """The option of this plain program given in `args` with which it runs a command."""
    options = PLAIN.get(name, _NONE)
    if not options:
        return None
    for word in args:
        if not word.known:
            return f"{name}'s options depend on {word.problem}"
        given = word.text.split("=", 1)[0]
        if given == "--":
            return None
        for option in options:
            if _names(option, given):
                return option
    return None


def _names(option: str, given: str) -> bool:
    """`--pre=x` and `--pr` (GNU abbreviations) name `--pre`; `-TTcmd` names `-TT`."""
    if option.startswith("--"):
        return len(given) > 3 and option.startswith(given) or given == option
    return given.startswith(option)
