"""Programs that run another program: where that program starts in their arguments.

`timeout 5 rm -rf v` runs `rm -rf v`; rules must see it. Each wrapper's options are
listed so that an option's value is never taken for the program (`sudo -u root rm`).
An option a wrapper's table does not know makes the inner command unknown: failing
closed beats guessing where the program starts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from caretz.permissions.words import Word

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
# Assignments that change which program a name runs, or what the shell loads first.
PROGRAM_CHANGING = frozenset(
    {"PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "BASH_ENV", "ENV", "IFS", "SHELLOPTS"}
)


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


@dataclass(frozen=True)
class WrapperSpec:
    with_value: frozenset[str] = frozenset()  # options that take a value (-u root, --user=root)
    flags: frozenset[str] = frozenset()  # options that take none
    optional_value: frozenset[str] = frozenset()  # a value only when attached (xargs -i{})
    no_command: frozenset[str] = frozenset()  # options after which nothing is run (command -v)
    body: frozenset[str] = frozenset()  # options whose value is a command line (su -c, env -S)
    positionals: int = 0  # words before the program (timeout's duration, chroot's root)
    assignments: bool = False  # NAME=value words before the program (env, sudo)
    numeric_option: bool = False  # `nice -10 cmd`
    any_long_option: bool = False  # every --option is self-contained (firejail)
    as_other_user: bool = False  # sudo, doas: an allow must name the wrapper too
    shell_when_bare: bool = False  # with no program it opens a shell reading stdin (sudo -s)


SPECS: dict[str, WrapperSpec] = {
    "env": WrapperSpec(
        with_value=_set("-u --unset -C --chdir -P"),
        flags=_set("-i --ignore-environment -0 --null -v --debug - --default-signal "
                   "--ignore-signal --block-signal --list-signal-handling"),
        body=_set("-S --split-string"),
        assignments=True,
    ),
    "sudo": WrapperSpec(
        with_value=_set("-u --user -g --group -h --host -p --prompt -C --close-from -D --chdir "
                        "-r --role -t --type -U --other-user -T --command-timeout -R --chroot"),
        flags=_set("-A --askpass -b --background -E --preserve-env -H --set-home -n "
                   "--non-interactive -P --preserve-groups -S --stdin -B --bell -k "
                   "--reset-timestamp -N --no-update -s --shell -i --login"),
        no_command=_set("-l --list -v --validate -K --remove-timestamp -V --version --help "
                        "-e --edit"),
        assignments=True, as_other_user=True, shell_when_bare=True,
    ),
    "doas": WrapperSpec(with_value=_set("-u -C"), flags=_set("-n -L -s"),
                        as_other_user=True, shell_when_bare=True),
    "pkexec": WrapperSpec(with_value=_set("--user"),
                          flags=_set("--disable-internal-agent --keep-cwd"),
                          no_command=_set("--version --help"), as_other_user=True,
                          shell_when_bare=True),
    "command": WrapperSpec(flags=_set("-p"), no_command=_set("-v -V")),
    "builtin": WrapperSpec(),
    "exec": WrapperSpec(with_value=_set("-a"), flags=_set("-c -l")),
    "nohup": WrapperSpec(no_command=_set("--help --version")),
    "nice": WrapperSpec(with_value=_set("-n --adjustment"), numeric_option=True),
    "ionice": WrapperSpec(with_value=_set("-c --class -n --classdata"),
                          flags=_set("-t --ignore"),
                          no_command=_set("-p --pid -P --pgid -u --uid")),
    "timeout": WrapperSpec(with_value=_set("-s --signal -k --kill-after"),
                           flags=_set("--preserve-status --foreground -v --verbose"),
                           positionals=1),
    "time": WrapperSpec(with_value=_set("-o --output -f --format"),
                        flags=_set("-p -a --append -v --verbose --portability -q --quiet")),
    "stdbuf": WrapperSpec(with_value=_set("-i --input -o --output -e --error")),
    "setsid": WrapperSpec(flags=_set("-c --ctty -f --fork -w --wait")),
    "chrt": WrapperSpec(
        with_value=_set("-T --sched-runtime -P --sched-period -D --sched-deadline"),
        flags=_set("-a --all-tasks -b --batch -d --deadline -f --fifo -i --idle -o --other "
                   "-r --rr -R --reset-on-fork -v --verbose"),
        no_command=_set("-p --pid -m --max"), positionals=1,
    ),
    "taskset": WrapperSpec(flags=_set("-a --all-tasks -c --cpu-list"),
                           no_command=_set("-p --pid"), positionals=1),
    "flock": WrapperSpec(
        with_value=_set("-w --wait --timeout -E --conflict-exit-code"),
        flags=_set("-s --shared -x -e --exclusive -u --unlock -n --nb --nonblock -o --close "
                   "-F --no-fork --verbose"),
        body=_set("-c --command"), positionals=1,
    ),
    "chroot": WrapperSpec(with_value=_set("--userspec --groups"), flags=_set("--skip-chdir"),
                          positionals=1),
    "unbuffer": WrapperSpec(flags=_set("-p")),
    "fakeroot": WrapperSpec(with_value=_set("-l --lib --faked -s -i"),
                            flags=_set("-u --unknown-is-real")),
    "firejail": WrapperSpec(any_long_option=True),
    "proxychains": WrapperSpec(with_value=_set("-f"), flags=_set("-q")),
    "proxychains4": WrapperSpec(with_value=_set("-f"), flags=_set("-q")),
    "busybox": WrapperSpec(),
    "toybox": WrapperSpec(),
    "coproc": WrapperSpec(),
    "noglob": WrapperSpec(),
    "xargs": WrapperSpec(
        with_value=_set("-a --arg-file -d --delimiter -E -I -L --max-lines -n --max-args -P "
                        "--max-procs -s --max-chars --process-slot-var --eof --replace"),
        flags=_set("-0 --null -o --open-tty -p --interactive -r --no-run-if-empty -t "
                   "--verbose -x --exit"),
        optional_value=_set("-e -i -l"),
        no_command=_set("--help --version"),
    ),
}  # fmt: skip


@dataclass
class Unwrapped:
    """Where a wrapper's program starts, or why that cannot be told."""

    command: tuple[Word, ...] = ()  # the program and its arguments (empty: runs nothing)
    body: Word | None = None  # a command line given as an option's value (su -c, env -S)
    problem: str | None = None  # set when the program's position or identity is unknown
    bare_shell: bool = False  # opens a shell that reads commands from stdin
    notes: list[str] = field(default_factory=list)


def unwrap(name: str, spec: WrapperSpec, args: tuple[Word, ...]) -> Unwrapped:
    """Split a wrapper's arguments into its own options and the command it runs."""
    result = Unwrapped()
    stop_command = False
    i = 0
    while i < len(args):
        word = args[i]
        if not word.known:
            result.problem = f"where {name}'s command starts depends on {word.problem}"
            return result
        text = word.text
        if text == "--":
            i += 1
            break
        if spec.assignments and _ASSIGNMENT.match(text):
            variable = text.split("=", 1)[0]
            if variable in PROGRAM_CHANGING:
                result.problem = f"{variable}=… changes which program runs"
                return result
            i += 1
            continue
        if not text.startswith("-") or text == "-":
            break
        consumed, outcome = _option(name, spec, args, i)
        if outcome == "unknown":
            result.problem = f"{name}'s option {text} is not one caretz knows"
            return result
        if outcome == "no-command":
            stop_command = True
        elif outcome.startswith("body:"):
            result.body = _body_word(args, i, consumed)
        i += consumed
    if stop_command:
        return Unwrapped()
    rest = args[i:]
    if len(rest) < spec.positionals:
        return result
    result.command = rest[spec.positionals :]
    if result.command and result.command[0].text in spec.body:  # flock FILE -c CMD
        result.body = _body_word(result.command, 0, 2)
        result.command = result.command[2:]
    if not result.command and result.body is None and spec.shell_when_bare and _shell_asked(args):
        result.bare_shell = True
    return result


def _shell_asked(args: tuple[Word, ...]) -> bool:
    return any(w.text in ("-s", "--shell", "-i", "--login") for w in args if w.known)


def _body_word(args: tuple[Word, ...], i: int, consumed: int) -> Word:
    """The command-line value of a body option: attached (`-Scmd`, `--split-string=cmd`) or next."""
    text = args[i].text
    if consumed == 2:
        return args[i + 1] if i + 1 < len(args) else Word("")
    if text.startswith("--"):
        return Word(text.split("=", 1)[1])
    return Word(text[2:])


def _option(name: str, spec: WrapperSpec, args: tuple[Word, ...], i: int) -> tuple[int, str]:
    """(words consumed, outcome): "flag", "no-command", "body:", or "unknown"."""
    text = args[i].text
    if text.startswith("--"):
        return _long_option(spec, text)
    if spec.numeric_option and text[1:].isdigit():
        return 1, "flag"
    for position in range(1, len(text)):
        option = "-" + text[position]
        attached = text[position + 1 :]
        if option in spec.body:
            return (1 if attached else 2), "body:"
        if option in spec.with_value:
            return (1 if attached else 2), "flag"
        if option in spec.optional_value:
            return 1, "flag"
        if option in spec.no_command:
            return 1, "no-command"
        if option not in spec.flags:
            return 1, "unknown"
    return 1, "flag"


def _long_option(spec: WrapperSpec, text: str) -> tuple[int, str]:
    given, has_value, _ = text.partition("=")
    if spec.any_long_option:
        return 1, "flag"
    known = spec.with_value | spec.flags | spec.no_command | spec.body | spec.optional_value
    option = _full_long_name(given, {k for k in known if k.startswith("--")})
    if option is None:
        return 1, "unknown"
    if option in spec.no_command:
        return 1, "no-command"
    takes_value = option in spec.with_value or option in spec.body
    consumed = 2 if takes_value and not has_value else 1
    return consumed, "body:" if option in spec.body else "flag"


def _full_long_name(given: str, known: set[str]) -> str | None:
    """GNU getopt accepts any unambiguous prefix of a long option (`--sig` for `--signal`)."""
    if given in known:
        return given
    candidates = [option for option in known if option.startswith(given)]
    return candidates[0] if len(candidates) == 1 else None
