"""git's own ways of running another command, read so that rules see what git runs.

- an alias given on the command line (`git -c alias.p=push p`) runs what it names: the
  command is read as `git push` (an alias starting with `!` as the shell line it is);
- the plumbing that pushes (`git send-pack`, `git http-push`) is read as `git push`;
- `rebase -x CMD`, `bisect run CMD`, `submodule foreach CMD`, `filter-branch --*-filter CMD`
  and `difftool -x CMD` run CMD: it is read too;
- a `-c` setting that can make git run a program (`core.hooksPath`, `core.sshCommand`,
  `core.pager`, any setting not known to be harmless), `--exec-path=…`, `--config-env`,
  `--upload-pack`/`--receive-pack`, and the remote helpers hide what runs: the command
  cannot be read (no allow rule matches it; a deny or ask rule that could match asks).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable

from caretz.permissions.command import Command, Runs
from caretz.permissions.words import Word

Parse = Callable[[str, int], tuple[Command, ...]]

_GLOBAL_WITH_VALUE = frozenset(
    {"-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--attr-source",
     "--list-cmds"}
)  # fmt: skip
_SAME_AS_PUSH = frozenset({"send-pack", "http-push"})


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


# git's own commands that run no program but what this module reads (`rebase -x`, `bisect
# run`, `submodule foreach`, `filter-branch`) and what its protected configuration and
# hooks name. Any other name is an alias of the user's, a `git-NAME` program on PATH, or a
# command that runs tools (difftool, mergetool, credential helpers, send-email, help).
_RUNS_ITSELF = _names(
    "add am annotate apply archive bisect blame branch bundle cat-file check-attr "
    "check-ignore check-mailmap check-ref-format checkout checkout-index cherry "
    "cherry-pick clean clone column commit commit-graph commit-tree config count-objects "
    "describe diff diff-files diff-index diff-tree fast-export fast-import fetch "
    "filter-branch for-each-ref format-patch fsck gc grep hash-object index-pack init "
    "interpret-trailers log ls-files ls-remote ls-tree maintenance merge merge-base "
    "merge-file merge-tree mktag mktree multi-pack-index mv name-rev notes pack-objects "
    "pack-refs prune pull push range-diff read-tree rebase reflog remote repack replace "
    "rerere reset restore rev-list rev-parse revert rm shortlog show show-branch show-ref "
    "sparse-checkout stash status stripspace submodule switch symbolic-ref tag "
    "update-index update-ref var verify-commit verify-pack verify-tag version whatchanged "
    "worktree write-tree"
)
# -c settings that never make git run a program (any other may: hooks, pagers, editors,
# ssh, diff and merge drivers, filters, credential helpers, includes, url rewrites).
_HARMLESS_PREFIXES = (
    "user.", "color.", "advice.", "init.", "log.", "column.", "status.", "blame.", "grep.",
    "pull.", "push.", "fetch.", "rebase.", "rerere.", "i18n.", "versionsort.", "tag.",
    "branch.", "checkout.", "feature.", "index.", "pack.", "gc.", "maintenance.",
    "transfer.", "safe.", "submodule.recurse", "format.pretty", "pretty.",
)  # fmt: skip
_HARMLESS_KEYS = frozenset(
    {"core.quotepath", "core.autocrlf", "core.safecrlf", "core.abbrev", "core.filemode",
     "core.ignorecase", "core.longpaths", "core.symlinks", "core.whitespace", "core.eol",
     "core.compression", "core.precomposeunicode", "core.checkstat", "core.trustctime",
     "core.untrackedcache", "core.commentchar", "core.preloadindex", "core.logallrefupdates",
     "core.sparsecheckout", "core.bigfilethreshold", "diff.noprefix", "diff.renames",
     "diff.algorithm", "diff.mnemonicprefix", "diff.colormoved", "diff.context",
     "diff.relative", "diff.submodule", "diff.ignoresubmodules", "diff.indentheuristic",
     "merge.conflictstyle", "merge.ff", "merge.renames", "merge.log", "merge.autostash",
     "protocol.version", "http.sslverify", "http.version", "http.postbuffer",
     "commit.verbose", "commit.cleanup", "commit.status"}
)  # fmt: skip
_FILTERS = frozenset(
    {"--env-filter", "--tree-filter", "--index-filter", "--parent-filter", "--msg-filter",
     "--commit-filter", "--tag-name-filter"}
)  # fmt: skip
_PROGRAM_OPTIONS = ("--upload-pack", "--receive-pack", "--exec")  # the command at the far end


# -c settings whose value is a command line git runs: read as a command git runs besides.
_COMMAND_KEYS = frozenset({"core.pager", "core.editor", "sequence.editor", "core.sshcommand"})


def read_git(words: tuple[Word, ...], text: str, depth: int, parse: Parse) -> Command:
    """git with what it runs inside it, or hidden where that cannot be told."""
    commands: list[str] = []  # `-c core.pager=cat`: command lines git may run
    found = _read(words, text, depth, parse, commands)
    if not commands or found.hidden is not None:
        return found
    extra = tuple(_reached(c, "git -c") for line in commands for c in parse(line, depth + 1))
    runs = Runs.BESIDES if found.runs is Runs.ITSELF else found.runs
    return Command(
        words=found.words, text=found.text, hidden=None, inner=found.inner + extra, runs=runs
    )


def _read(
    words: tuple[Word, ...], text: str, depth: int, parse: Parse, commands: list[str]
) -> Command:
    args = words[1:]
    aliases: dict[str, str] = {}
    i = 0
    while i < len(args):
        word = args[i]
        if not word.known:
            return Command(words=words, text=text)  # rules see the unknown word and ask
        option = word.text
        if option in ("-c", "--config-env") or option.startswith("--config-env="):
            setting = Word(option.split("=", 1)[1]) if "=" in option else _at(args, i + 1)
            i += 1 if "=" in option else 2
            problem = _setting(option, setting, aliases, commands)
            if problem is not None:
                return Command(words=words, text=text, hidden=problem)
            continue
        if option.startswith("--exec-path="):
            return Command(
                words=words, text=text, hidden="git --exec-path=… changes which programs git runs"
            )
        if not option.startswith("-"):
            break
        i += 2 if option in _GLOBAL_WITH_VALUE else 1
    if i >= len(args):
        return Command(words=words, text=text)
    sub, rest = args[i].text, args[i + 1 :]
    if sub.lower() in aliases:
        return _alias(words, text, depth, parse, words[: i + 2], aliases[sub.lower()], rest)
    if sub in _SAME_AS_PUSH:
        line = _joined([*(w.text for w in words[: i + 1]), "push"], rest)
        return _running(words, text, depth, parse, line, f"git {sub}", Runs.INSTEAD)
    if sub.startswith("remote-"):
        return Command(
            words=words, text=text, hidden=f"git {sub} reads the commands it runs from its input"
        )
    found = _subcommand(words, text, depth, parse, sub, rest)
    if sub not in _RUNS_ITSELF and found.hidden is None:
        why = f"git {sub} is an alias, a program git-{sub}, or one that runs others"
        return found.with_unseen(why)
    return found


def _setting(
    option: str, setting: Word, aliases: dict[str, str], commands: list[str]
) -> str | None:
    """Why a -c or --config-env setting hides what git runs, or None (an alias, or a
    command git runs, is noted)."""
    if not setting.known:
        return f"git {option} … is {setting.problem}"
    key, _, value = setting.text.partition("=")
    key = key.lower()
    if key.startswith("alias.") and option == "-c":
        aliases[key[len("alias.") :]] = value
        return None
    if option == "-c" and (key in _COMMAND_KEYS or key.startswith("pager.")):
        commands.append(value or "true")  # `pager.log` with no value is a boolean
        return None
    if key in _HARMLESS_KEYS or key.startswith(_HARMLESS_PREFIXES):
        return None
    return f"git {option} {key}=… can make git run a command caretz does not read"


def _alias(
    words: tuple[Word, ...],
    text: str,
    depth: int,
    parse: Parse,
    head: tuple[Word, ...],
    value: str,
    rest: tuple[Word, ...],
) -> Command:
    """`git -c alias.p=push p x` runs `git push x`; `alias.p='!cmd'` runs `cmd x` in a shell."""
    via = f"git alias {head[-1].text}"
    if value.startswith("!"):
        line = _joined([], rest, start=value[1:])
    else:
        try:
            expansion = shlex.split(value)
        except ValueError:
            return Command(words=words, text=text, hidden=f"the {via} cannot be split into words")
        line = _joined([*(w.text for w in head[:-1]), *expansion], rest)
    return _running(words, text, depth, parse, line, via, Runs.INSTEAD)


def _subcommand(
    words: tuple[Word, ...], text: str, depth: int, parse: Parse, sub: str, rest: tuple[Word, ...]
) -> Command:
    unknown = next((w for w in rest if not w.known), None)
    bodies: list[Word] = []
    for index, word in enumerate(rest):
        option = word.text if word.known else ""
        given = option.split("=", 1)[0]
        names_program = given in _PROGRAM_OPTIONS and sub != "rebase"
        if names_program or (option == "-u" and sub == "clone"):
            return Command(
                words=words, text=text, hidden=f"git {sub} {given} names a program to run"
            )
        if _runs_its_value(sub, given):
            bodies.append(_value(rest, index))
        elif sub == "rebase" and option.startswith("-x") and len(option) > 2:
            bodies.append(Word(option[2:]))
    if sub == "bisect" and rest[:1] and rest[0].text == "run":
        bodies.append(unknown or Word(_joined([], rest[1:]) or ""))  # all known: joined
    if sub == "submodule" and any(w.text == "foreach" for w in rest):
        after = [w for w in rest[[w.text for w in rest].index("foreach") + 1 :]]
        after = [w for w in after if not (w.known and w.text in ("--recursive", "-q"))]
        bodies.append(unknown or Word(" ".join(w.text for w in after)))
    if not bodies:
        return Command(words=words, text=text)
    inner: list[Command] = []
    for body in bodies:
        if not body.known:
            return Command(
                words=words, text=text, hidden=f"the command git {sub} runs is {body.problem}"
            )
        inner += [_reached(c, f"git {sub}") for c in parse(body.text, depth + 1)]
    return Command(words=words, text=text, inner=tuple(inner), runs=Runs.BESIDES)


def _runs_its_value(sub: str, option: str) -> bool:
    """Whether this option of this subcommand takes a command line as its value."""
    if sub == "rebase":
        return option in ("-x", "--exec")
    if sub == "difftool":
        return option in ("-x", "--extcmd")
    return sub == "filter-branch" and option in _FILTERS


def _running(
    words: tuple[Word, ...],
    text: str,
    depth: int,
    parse: Parse,
    line: str | None,
    via: str,
    runs: Runs,
) -> Command:
    if line is None:
        return Command(
            words=words, text=text, hidden=f"the arguments of the {via} are only known when it runs"
        )
    inner = tuple(_reached(c, via) for c in parse(line, depth + 1))
    return Command(words=words, text=text, inner=inner, runs=runs)


def _joined(head: list[str], rest: tuple[Word, ...], start: str = "") -> str | None:
    if any(not word.known for word in rest):
        return None
    quoted = [shlex.quote(part) for part in head] + [shlex.quote(word.text) for word in rest]
    return " ".join([start, *quoted] if start else quoted)


def _value(args: tuple[Word, ...], index: int) -> Word:
    option = args[index]
    if option.known and "=" in option.text and option.text.startswith("--"):
        return Word(option.text.split("=", 1)[1])
    return _at(args, index + 1)


def _at(args: tuple[Word, ...], index: int) -> Word:
    return args[index] if index < len(args) else Word("")


def _reached(command: Command, via: str) -> Command:
    return command.reached(via)
