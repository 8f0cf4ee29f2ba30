"""Programs that run another program: where that program starts in their arguments.

`timeout 5 rm -rf v` runs `rm -rf v`; rules must see it. Each wrapper's options are
listed so that an option's value is never taken for the program (`sudo -u root rm`).
An option a wrapper's table does not know makes the inner command unknown: failing
closed beats guessing where the program starts.
"""

from __future__ import annotations

import re
from dataclasses import field

from caretz.inbound import ascii_number
from caretz.lazy_dataclass import lazy_dataclass
from caretz.permissions.words import Word

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
# Assignments that change which program a name runs, or what the shell loads first, or
# what git runs (its configuration given in variables, its programs, its hooks' home).
PROGRAM_CHANGING = frozenset(
    {"PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "BASH_ENV", "ENV", "IFS", "SHELLOPTS",
     "BASHOPTS", "PROMPT_COMMAND", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "GIT_SSH",
     "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR",
     "GIT_ASKPASS", "GIT_PROXY_COMMAND", "GIT_DIR", "GIT_COMMON_DIR", "PAGER", "MANPAGER",
     "EDITOR", "VISUAL", "SSH_ASKPASS", "SUDO_ASKPASS", "LESSOPEN", "LESSCLOSE", "HOME",
     "XDG_CONFIG_HOME"}
)  # fmt: skip
# Of those, the ones whose value is a command line the program runs: before a command
# they are read as commands it runs besides (`GIT_PAGER=cat git log` runs cat).
COMMAND_VARIABLES = frozenset(
    {"GIT_SSH_COMMAND", "GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_EXTERNAL_DIFF",
     "GIT_ASKPASS", "GIT_PROXY_COMMAND", "GIT_SSH", "PAGER", "MANPAGER", "EDITOR", "VISUAL"}
)  # fmt: skip
# Variables a command line may set that change no program's choice of what it runs: the
# locale, the terminal and its colours, a time zone, CI and log switches, who a commit is
# by. Any other (upper-case) name may: `RIPGREP_CONFIG_PATH=./rc rg` runs the `--pre`
# program ./rc names. Lower-case names are the shell's own variables.
HARMLESS_VARIABLES = frozenset(
    {"LANG", "LANGUAGE", "TZ", "TERM", "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR",
     "CLICOLOR", "CLICOLOR_FORCE", "COLORTERM", "CI", "DEBUG", "VERBOSE", "TMPDIR",
     "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED", "PYTHONIOENCODING",
     "RUST_BACKTRACE", "RUST_LOG", "NODE_ENV", "CGO_ENABLED", "GOOS", "GOARCH",
     "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME",
     "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE", "GIT_TERMINAL_PROMPT", "GIT_TRACE",
     "TOKENIZERS_PARALLELISM", "OMP_NUM_THREADS", "SOURCE_DATE_EPOCH"}
)  # fmt: skip
_PROGRAM_CHANGING_PREFIXES = ("GIT_CONFIG", "LD_", "BASH_FUNC_")
# The dynamic loader, run as a program: `/lib64/ld-linux-x86-64.so.2 /usr/bin/git push`.
_LOADER = re.compile(r"ld(?:-linux[-a-z0-9_]*|-musl-[a-z0-9_]+)?\.so(?:\.[0-9]+)*")


def program_changing(name: str) -> bool:
    """Whether assigning this variable changes which program a command runs, or what it runs."""
    return name in PROGRAM_CHANGING or name.startswith(_PROGRAM_CHANGING_PREFIXES)


def harmless_variable(name: str) -> bool:
    """Whether setting this variable for a command cannot change what the command runs."""
    if name in HARMLESS_VARIABLES or name.startswith("LC_"):
        return True
    return any(char.islower() for char in name) and not program_changing(name)


def is_loader(program: str) -> bool:
    return _LOADER.fullmatch(program) is not None


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


@lazy_dataclass(frozen=True, kw_only=True)
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
    options_after_positionals: bool = False  # `setarch ARCH -R cmd`
    code_options: frozenset[str] = frozenset()  # options that load code (ld.so --preload)


_SETARCH_FLAGS = _set(
    "-B -F -I -L -R -S -T -X -Z -3 -v --addr-no-randomize --32bit "
    "--fdpic-funcptrs --short-inode --addr-compat-layout --sticky-timeouts "
    "--read-implies-exec --mmap-page-zero --whole-seconds --uname-2.6 --verbose"
)
_SETARCH_NO_COMMAND = _set("--list --help --version")
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
    "setarch": WrapperSpec(flags=_SETARCH_FLAGS, no_command=_SETARCH_NO_COMMAND,
                           positionals=1, options_after_positionals=True),
    **{arch: WrapperSpec(flags=_SETARCH_FLAGS, no_command=_SETARCH_NO_COMMAND)
       for arch in ("linux32", "linux64", "i386", "x86_64", "uname26", "aarch64", "arm64")},
    "strace": WrapperSpec(
        with_value=_set("-a -b -e -E -I -o -O -p -P -s -S -u -X -U --attach --columns "
                        "--detach-on --env --output --summary-columns --trace --trace-fds "
                        "--signal --status --string-limit --user --const-print-style "
                        "--trace-path --sort --kvm --argv0 --inject --fault --decode-fds"),
        flags=_set("-c -C -d -D -f -F -h -i -k -n -q -r -t -T -v -V -w -x -y -z -Z -Y "
                   "--follow-forks --output-separately --summary-only --summary "
                   "--summary-wall-clock --no-abbrev --verbose --daemonize --debug "
                   "--instruction-pointer --syscall-number --stack-trace --failed-only "
                   "--successful-only --seccomp-bpf --decode-pids --quiet --silence "
                   "--absolute-timestamps --relative-timestamps --syscall-times --timestamps"),
        no_command=_set("--help --version"),
    ),
    "ltrace": WrapperSpec(
        with_value=_set("-a -A -D -e -F -l -n -o -p -s -u -x -w --align --indent --output "
                        "--library --config"),
        flags=_set("-b -c -C -d -f -h -i -L -r -S -t -T -V --demangle --debug"),
        no_command=_set("--help --version"),
    ),
    "ld.so": WrapperSpec(
        with_value=_set("--library-path --inhibit-rpath --argv0 --glibc-hwcaps-prepend "
                        "--glibc-hwcaps-mask --audit --preload"),
        flags=_set("--inhibit-cache"),
        no_command=_set("--list --verify --list-tunables --list-diagnostics --help --version"),
        code_options=_set("--audit --preload"),
    ),
    "unshare": WrapperSpec(
        with_value=_set("-S --setuid -G --setgid --propagation --setgroups --map-user "
                        "--map-group --map-users --map-groups --monotonic --boottime -R --root "
                        "-w --wd -l --load-interp"),
        flags=_set("-f --fork -r --map-root-user -c --map-current-user --map-auto "
                   "--keep-caps -C --cgroup -T --time -m --mount -u --uts -i --ipc -n --net "
                   "-p --pid -U --user --mount-proc --kill-child"),
        no_command=_set("--help --version"),
    ),
    "nsenter": WrapperSpec(
        with_value=_set("-t --target -S --setuid -G --setgid --root --wd -N --net-socket"),
        flags=_set("-a --all -F --no-fork --preserve-credentials -Z --follow-context -m "
                   "--mount -u --uts -i --ipc -n --net -p --pid -U --user -C --cgroup -T "
                   "--time -r -w"),
        no_command=_set("--help --version"),
    ),
    "systemd-run": WrapperSpec(
        with_value=_set("-p --property -u --unit --description --slice -E --setenv -M "
                        "--machine -H --host --uid --gid --nice --working-directory "
                        "--service-type --on-active --on-boot --on-startup --on-calendar"),
        flags=_set("--user --system --scope -t --pty -P --pipe -G --collect -q --quiet -r "
                   "--remain-after-exit --wait --no-block --no-ask-password --same-dir -d"),
        no_command=_set("--help --version"),
    ),
    "xvfb-run": WrapperSpec(with_value=_set("-e --error-file -f --auth-file -n --server-num "
                                           "-p --xauth-protocol -s --server-args -w --wait"),
                            flags=_set("-a --auto-servernum -l --listen-tcp -d --auto-display"),
                            no_command=_set("-h --help")),
    "dbus-run-session": WrapperSpec(with_value=_set("--config-file --dbus-daemon")),
    "eatmydata": WrapperSpec(),
    "catchsegv": WrapperSpec(),
    "valgrind": WrapperSpec(flags=_set("-q -v -s"), any_long_option=True),
    "xargs": WrapperSpec(
        with_value=_set("-a --arg-file -d --delimiter -E -I -L --max-lines -n --max-args -P "
                        "--max-procs -s --max-chars --process-slot-var --eof --replace"),
        flags=_set("-0 --null -o --open-tty -p --interactive -r --no-run-if-empty -t "
                   "--verbose -x --exit"),
        optional_value=_set("-e -i -l"),
        no_command=_set("--help --version"),
    ),
}  # fmt: skip


@lazy_dataclass(kw_only=True)
class Unwrapped:
    """Where a wrapper's program starts, or why that cannot be told."""

    command: tuple[Word, ...] = ()  # the program and its arguments (empty: runs nothing)
    body: Word | None = None  # a command line given as an option's value (su -c, env -S)
    problem: str | None = None  # set when the program's position or identity is unknown
    bare_shell: bool = False  # opens a shell that reads commands from stdin
    unseen: str | None = None  # `env RIPGREP_CONFIG_PATH=… rg`: what the program runs may change
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
            if program_changing(variable):
                result.problem = f"{variable}=… changes which program runs"
                return result
            if not harmless_variable(variable) and result.unseen is None:
                result.unseen = (
                    f"{variable}=… may change what it runs (a variable caretz does not know)"
                )
            i += 1
            continue
        if not text.startswith("-") or text == "-":
            break
        consumed, outcome = _option(name, spec, args, i)
        if outcome == "unknown":
            result.problem = f"{name}'s option {text} is not one caretz knows"
            return result
        if text.split("=", 1)[0] in spec.code_options:
            result.problem = f"{name} {text.split('=', 1)[0]} loads code into the program"
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
    if spec.options_after_positionals and result.command:
        after = unwrap(name, WrapperSpec(with_value=spec.with_value, flags=spec.flags, no_command=spec.no_command),
                       result.command)  # fmt: skip
        after.body = after.body or result.body
        return after
    if result.command and result.command[0].text in spec.body:  # flock FILE -c CMD
        result.body = _body_word(result.command, 0, 2)
        result.command = result.command[2:]
    first = result.command[0] if result.command and result.body is None else None
    if first is not None and first.known and first.text.startswith("-") and first.text != "-":
        result.problem = f"{name}'s option {first.text} is not one caretz knows"
        return result
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
    if spec.numeric_option and ascii_number(text[1:]) is not None:
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
