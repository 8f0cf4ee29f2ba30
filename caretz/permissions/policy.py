"""Deciding one tool call against the rules: deny beats ask beats allow.

A bash command line is allowed only when every command in it is allowed; one denied
command denies the whole line. A command caretz cannot read before it runs (a
variable as the program, a pipe into a shell, `eval $x`) is allowed by no rule but
the bare tool name, and where a deny or ask rule could match it the answer is "ask":
nothing runs on the strength of a guess. With no rule for the call the answer is
"no-match", and the permission mode decides.
"""

from __future__ import annotations

import functools
import ipaddress
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from caretz.lazy import lazy_module
from caretz.lazy_dataclass import lazy_dataclass

if TYPE_CHECKING:
    from caretz.permissions.command import Command, LineParts
    from caretz.permissions.index import BashRules, ProgramIndex
    from caretz.permissions.paths import PathFacts
    from caretz.permissions.patterns import Match
    from caretz.permissions.rules import Rule

if TYPE_CHECKING:
    from caretz.permissions import command as shell_commands
    from caretz.permissions import handed as handed_commands
    from caretz.permissions import index as bash_index
    from caretz.permissions import paths as rule_paths
    from caretz.permissions import patterns as rule_patterns
    from caretz.permissions import shell as shell_parse
else:
    # What reads commands and paths: loaded at the first check with rules (most sessions have none).
    bash_index = lazy_module("caretz.permissions.index")
    rule_paths = lazy_module("caretz.permissions.paths")
    rule_patterns = lazy_module("caretz.permissions.patterns")
    shell_commands = lazy_module("caretz.permissions.command")
    # The shell's reader (tree-sitter): only with bash rules to check.
    shell_parse = lazy_module("caretz.permissions.shell")
    # What a line hands the programs caretz does not read: only with bash rules to check.
    handed_commands = lazy_module("caretz.permissions.handed")

Outcome = Literal["allow", "ask", "deny", "no-match"]
# A part a deny or ask rule could match: (the rule, the part, why it cannot be read,
# whether an allow rule naming the part answers for it).
Unresolved = tuple["Rule", "Command", str, bool]
_PATH_KEYS = ("path", "file_path", "filepath", "filename", "file", "notebook_path", "target")
_SEARCHES = frozenset({"glob", "grep"})
_ANY_CHILD = "/\0"  # a name no file has: stands for anything inside a directory
_VERBS = {"deny": "is denied by", "ask": "asks first by"}


@lazy_dataclass(frozen=True, kw_only=True)
class Decision:
    outcome: Outcome
    reason: str  # one line, for the model and the user
    rule: Rule | None = None  # the rule that decided: rule.text, rule.source
    part: str | None = None  # the command or path the decision is about
    unresolved: str | None = None  # why that part cannot be read before it runs


class RuleSet:
    """The rules of a session: profile, project `.caretz/settings.json`, disallowedTools.

    The parts that read commands and paths load at the first check with rules to check:
    a session without rules (most) never loads them.
    """

    def __init__(self, rules: Iterable[Rule], project_root: str | Path, home: str | None = None):
        self.rules = tuple(rules)
        self.project_root = os.path.normpath(os.path.abspath(project_root))
        self.home = os.path.normpath(home or os.path.expanduser("~"))

    @functools.cached_property
    def bash(self) -> BashRules:
        return bash_index.BashRules(self.rules)

    def __bool__(self) -> bool:
        return bool(self.rules)

    def with_rules(self, rules: Iterable[Rule]) -> RuleSet:
        return RuleSet((*self.rules, *rules), self.project_root, self.home)

    def check(self, tool: str, args: Mapping[str, Any], cwd: str | Path) -> Decision:
        """The decision for one call of `tool` with `args`, run in `cwd`."""
        if not self.rules:
            return Decision(outcome="no-match", reason=f"no rule covers {tool}")
        command = args.get("command")
        if tool == "bash" and isinstance(command, str) and self.bash.any:
            return _check_command(self.bash, command)
        relevant = [rule for rule in self.rules if rule.covers(tool)]
        if not relevant:
            return Decision(outcome="no-match", reason=f"no rule covers {tool}")
        path = next((args[key] for key in _PATH_KEYS if isinstance(args.get(key), str)), None)
        facts = None
        if path is not None and path.strip():
            facts = rule_paths.PathFacts.of(path, os.fspath(cwd), self.project_root, self.home)
        return _check_call(relevant, tool, args, path, facts)

    def check_path(self, tool: str, path: str, cwd: str | Path) -> Decision:
        """The decision for `tool` touching one file: grep and glob ask it for each file."""
        return self.check(tool, {"path": path}, cwd)


# -- bash ----------------------------------------------------------------------------------


def _check_command(rules: BashRules, line: str) -> Decision:
    commands = shell_parse.parse_command_line(line)
    parts = shell_commands.LineParts(commands)
    maybe: list[Unresolved] = []
    for behavior in ("deny", "ask"):
        match, rule, part, unknown = _find(rules, behavior, parts, line)
        if match is rule_patterns.Match.YES:
            shown = _shown(part)
            return Decision(
                outcome=behavior,
                reason=f"`{shown}` {_VERBS[behavior]} {_named(rule)}",
                rule=rule,
                part=shown,
            )
        maybe += unknown
    if maybe:
        hidden = next((entry for entry in maybe if not entry[3]), None)
        if hidden is not None:
            return _cannot_tell(*hidden[:3])
        named = _allowed_by_name(rules.allow, commands, set())
        unresolved = next((entry for entry in maybe if id(entry[1]) not in named), None)
        if unresolved is not None:
            return _cannot_tell(*unresolved[:3])
    decision = _allow_all(rules.allow, commands, line)
    if maybe and decision.outcome == "allow":
        reason = f"{decision.reason}, which covers what `{_shown(maybe[0][1])}` runs"
        return Decision(outcome="allow", reason=reason, rule=decision.rule, part=decision.part)
    return decision


def _cannot_tell(rule: Rule, part: Command, why: str) -> Decision:
    shown = _shown(part)
    reason = f"caretz cannot tell what `{shown}` runs ({why}) and {_named(rule)} could match it"
    return Decision(outcome="ask", reason=reason, rule=rule, part=shown, unresolved=why)


def _unresolved(rule: Rule, part: Command) -> Unresolved:
    """A command a rule could match, why it cannot be read, and whether an allow rule
    naming it may answer for it: only when what it runs is unknown, not the command
    itself (`Bash(python3:*)` for `python3 -c …`; never `Bash(git:*)` for `git $x` beside
    a deny on `git push`, where the word known only when it runs may be `push`)."""
    why = part.unknown or _unknown_word(part) or part.unseen or ""
    itself = _unknown_word(part) is not None and (
        rule.command is None or part.program is None or rule.command.names(part.program)
    )
    vouchable = part.unknown is None and part.unseen is not None and not itself
    return (rule, part, why, vouchable)


def _allowed_by_name(
    allows: ProgramIndex, commands: tuple[Command, ...], read: set[int]
) -> set[int]:
    """The commands (by id) an allow rule naming them covers, with all they run: the bare
    `Bash` allows everything, and so names nothing that runs others."""
    covered: set[int] = set()
    for command in commands:
        if id(command) in read:
            continue  # a command written again (the same object): decided before
        read.add(id(command))
        rule = allowing_rule(command, allows)
        if rule is not None and not rule.whole_tool:
            covered.update(id(part) for part in command.walk())
        else:
            covered |= _allowed_by_name(allows, command.inner, read)
    return covered


def _find(
    rules: BashRules, behavior: str, parts: LineParts, line: str
) -> tuple[Match, Any, Any, list[Unresolved]]:
    """(YES or UNKNOWN or NO, the rule, the part, and every part a rule could match, with
    why): the first part a rule matches."""
    unknown: list[Unresolved] = []
    index = rules.of(behavior)
    read: set[int] = set()
    for part in _reachable(index, parts):
        if id(part) in read:
            continue  # a command written again (the same object): it matched nothing before
        read.add(id(part))
        could: Unresolved | None = None
        for rule in index.candidates(part):
            match = rule_patterns.Match.YES if rule.command is None else rule.command.contains(part)
            if match is rule_patterns.Match.YES:
                return match, rule, part, []
            if match is rule_patterns.Match.UNKNOWN and could is None:
                could = _unresolved(rule, part)  # one rule that could match is enough
        if could is not None:
            unknown.append(could)
    legacy = [r for r in rules.legacy if r.behavior == behavior]
    for rule in legacy:
        assert rule.legacy is not None
        match, found = rule.legacy.find(parts)
        if match is rule_patterns.Match.YES:
            return match, rule, found, []
        if match is rule_patterns.Match.UNKNOWN and found is not None:
            unknown.append(_unresolved(rule, found))
    # What the line hands a program caretz does not read (handed.py): it may run it.
    for rule, part, why in handed_commands.handed(index, legacy, parts, line):
        unknown.append((rule, part, why, part.unknown is None))
    # What bash itself may evaluate in the line's strings: no allow rule names that.
    for rule, part, why in handed_commands.evaluated(index, legacy, parts, line):
        unknown.append((rule, part, why, False))
    if unknown:
        return rule_patterns.Match.UNKNOWN, unknown[0][0], unknown[0][1], unknown
    return rule_patterns.Match.NO, None, None, []


def _reachable(index: ProgramIndex, parts: LineParts) -> Iterable[Command]:
    """The parts, in order, that some rule of `index` may match: for the others
    `index.candidates` is empty."""
    if index.other_programs:  # rules for every command, or for programs matched by a glob
        return parts.commands
    return [parts.commands[position] for position in parts.running(index.by_program)]


def _allow_all(allows: ProgramIndex, commands: tuple[Command, ...], line: str) -> Decision:
    if not commands:
        return Decision(
            outcome="no-match", reason="the command runs nothing a rule could allow", part=line
        )
    deciding = None
    read: set[int] = set()
    for command in commands:
        if id(command) in read:
            continue  # a command written again (the same object): allowed before
        read.add(id(command))
        rule = allowing_rule(command, allows)
        if rule is None:
            blocker = _first_unallowed(command, allows)
            shown = _shown(blocker)
            why = blocker.unknown or _unknown_word(blocker)
            reason = f"no rule allows `{shown}`" + (f" ({why})" if why else "")
            return Decision(outcome="no-match", reason=reason, part=shown, unresolved=why)
        deciding = deciding or rule
    assert deciding is not None
    return Decision(
        outcome="allow", reason=f"allowed by {_named(deciding)}", rule=deciding, part=line
    )


def allowing_rule(command: Command, allows: ProgramIndex) -> Rule | None:
    """The allow rule that covers this command and all it runs, or None.

    An exact rule covers the command with all it runs; a wrapper such as `timeout`
    is allowed when what it runs is; `sudo` and `find -exec` need their own allow too.
    """
    own = None
    for rule in allows.candidates(command):
        if _allows(rule, command):
            own = rule
            break
    if own is not None and _exact(own):
        return own  # the user allowed exactly this line, with everything in it
    if command.runs is shell_commands.Runs.ITSELF or command.hidden is not None:
        return own if command.hidden is None else None
    if command.runs is shell_commands.Runs.NAMED and own is not None:
        return own  # `Bash(npx jest:*)` allows `npx jest`; deny rules read the inner command
    if command.runs not in (shell_commands.Runs.INSTEAD, shell_commands.Runs.NAMED) and own is None:
        return None  # sudo, find -exec: the outer command needs its own allow too
    inner = [allowing_rule(child, allows) for child in command.inner]
    if not command.inner or any(rule is None for rule in inner):
        return None
    return own or inner[0]


def _first_unallowed(command: Command, allows: ProgramIndex) -> Command:
    for child in command.inner:
        if allowing_rule(child, allows) is None:
            return _first_unallowed(child, allows)
    return command


def _allows(rule: Rule, command: Command) -> bool:
    if rule.whole_tool:
        return True
    return rule.command is not None and rule.command.starts(command)


def _exact(rule: Rule) -> bool:
    return rule.whole_tool or (
        rule.command is not None and not rule.command.prefix and "*" not in rule.command.tokens
    )


def _unknown_word(command: Command) -> str | None:
    return next((word.problem for word in command.words if not word.known), None)


def _shown(command: Command) -> str:
    shown = command.shown()
    return f"{shown} (run by {command.via})" if command.via else shown


# -- other tools ------------------------------------------------------------------------------


def _check_call(
    rules: list[Rule],
    tool: str,
    args: Mapping[str, Any],
    path: str | None,
    facts: PathFacts | None,
) -> Decision:
    part = _display(facts) if facts is not None else None
    for behavior in ("deny", "ask", "allow"):
        for rule in (r for r in rules if r.behavior == behavior):
            if _call_matches(rule, tool, args, path, facts):
                verb = _VERBS.get(behavior, "is allowed by")
                subject = f"{tool} {part}" if part else tool
                return Decision(
                    outcome=behavior,
                    reason=f"{subject} {verb} {_named(rule)}",
                    rule=rule,
                    part=part,
                )
    subject = f"{tool} {part}" if part else tool
    return Decision(outcome="no-match", reason=f"no rule matches {subject}", part=part)


def _call_matches(
    rule: Rule, tool: str, args: Mapping[str, Any], path: str | None, facts: PathFacts | None
) -> bool:
    if rule.whole_tool:
        return True
    if rule.legacy is not None:
        legacy = rule.legacy
        if legacy.path is not None:
            return path is not None and facts is not None and legacy.path.matches_any(path, facts)
        if legacy.substring is not None:
            wanted = legacy.substring.strip()
            return wanted == "*" or any(
                isinstance(value, str) and wanted in value for value in args.values()
            )
        return False
    if rule.path is not None:
        if facts is None:
            return False
        candidates = facts.candidates()
        if tool in _SEARCHES:  # a search reads what lies inside the directory it is given
            candidates += tuple(candidate + _ANY_CHILD for candidate in candidates)
        if rule.behavior == "allow":  # every spelling of the path must be allowed
            return all(rule.path.matches(c, facts, inside_root_only=True) for c in candidates)
        return any(rule.path.matches(c, facts, inside_root_only=False) for c in candidates)
    if rule.domain is not None:
        host = url_host(args.get("url"))
        if host == rule.domain:
            return True
        # A name covers its subdomains; an address is only ever itself (0.1 is no parent
        # of 10.0.0.1).
        return not _is_address(host) and host.endswith("." + rule.domain)
    return False


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def url_host(url: Any) -> str:
    """The host a URL names, as a domain rule reads it (lower case, no trailing dot, an
    IPv6 address without brackets); "" for no URL or one that cannot be read."""
    if not isinstance(url, str):
        return ""
    try:
        host = urlsplit(url.strip()).hostname or ""
    except ValueError:  # "http://[::1": a bracket left open
        return ""
    return host.rstrip(".")


def _display(facts: PathFacts) -> str:
    root = facts.root.rstrip("/") + "/"
    return facts.given[len(root) :] if facts.given.startswith(root) else facts.given


def _named(rule: Rule) -> str:
    return f"the {rule.behavior} rule {rule.text} ({rule.source})"
