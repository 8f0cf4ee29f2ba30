"""The rule "yes, always" saves, and saving it to the project's `.caretz/settings.json`.

The proposal is the narrowest rule that matches the same call next time:

- a command's exact words: `npm run test` → `Bash(npm run test)`, `git push origin main` →
  `Bash(git push origin main)`. Rules match words, not text, so the rule matches again
  however the command is quoted, spaced, prefixed with `cd dir &&` (when cd is allowed)
  or wrapped in `timeout`, `nice`, `env VAR=x`;
- up to the first free-text word when there is one (a word with spaces, such as a commit
  message): `git commit -m "fix the parser"` → `Bash(git commit -m:*)`. Never for shells
  and interpreters, where the text is the program (`python3 -c "…"` stays exact);
- for a compound line, one rule per command not yet allowed;
- for `sudo`, `find -exec` and other commands that run more: their whole line, exactly;
- for file tools, the one file: `Edit(./src/app.py)`, `Read(~/notes.txt)`;
- for web_fetch, the URL's host: `WebFetch(domain:docs.python.org)`.

A prefix rule such as `Bash(git push:*)` would also allow `git push --force`, so it is
never proposed from `git push`: users who want it write it. When no saved rule could
match the call again (it runs code caretz cannot see) nothing is proposed.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from caretz.lazy_dataclass import lazy_dataclass
from caretz.permissions.command import Command, Runs
from caretz.permissions.launch import is_interpreter
from caretz.permissions.policy import RuleSet, allowing_rule, url_host
from caretz.permissions.project import PROJECT_SETTINGS, read_project_settings
from caretz.permissions.rules import TOOL_FAMILIES, domain_rule, parse_rule
from caretz.permissions.runner import SHELLS
from caretz.permissions.shell import parse_command_line
from caretz.sandbox.door import write_beneath

_RULE_NAMES = {
    "read": "Read",
    "write": "Edit",
    "edit": "Edit",
    "multi_edit": "Edit",
    "glob": "Glob",
    "grep": "Grep",
    "web_search": "WebSearch",
}
_CODE_FLAGS = frozenset({"-c", "-e", "-E", "-r", "--eval", "--command"})
_GLOB_CHARS = re.compile(r"([*?\[\]{}\\])")


@lazy_dataclass(frozen=True)
class Proposal:
    rules: tuple[str, ...]  # rule texts for permissions.allow
    unsavable: str | None = None  # why no rule can be saved ("always" is then not offered)


def propose_rules(
    tool: str, args: Mapping[str, Any], cwd: str | Path, ruleset: RuleSet
) -> Proposal:
    """The allow rules that make this exact call run without asking next time."""
    command = args.get("command")
    if tool == "bash" and isinstance(command, str):
        proposal = _for_command_line(command, ruleset)
    elif tool in TOOL_FAMILIES["webfetch"]:
        proposal = _for_fetch(args)
    else:
        proposal = Proposal((_for_call(tool, args, cwd, ruleset),))
    if proposal.unsavable is not None:
        return proposal
    # A saved rule must match the same call next time: check it, rather than trust it.
    saved = [parse_rule(text, "allow", os.fspath(PROJECT_SETTINGS)) for text in proposal.rules]
    if ruleset.with_rules(saved).check(tool, args, cwd).outcome != "allow":
        return Proposal((), "no rule caretz can save would allow this call again")
    return proposal


def _for_command_line(line: str, ruleset: RuleSet) -> Proposal:
    allows = ruleset.bash.allow
    rules: list[str] = []
    for command in parse_command_line(line):
        if allowing_rule(command, allows) is not None:
            continue
        proposal = _for_command(command)
        if proposal.unsavable is not None:
            return proposal
        rules += [rule for rule in proposal.rules if rule not in rules]
    if not rules:
        return Proposal((), "every command in it is allowed already")
    return Proposal(tuple(rules))


def _for_command(command: Command) -> Proposal:
    if command.unknown is not None:
        return Proposal((), f"caretz cannot see what `{command.shown()}` runs ({command.unknown})")
    inner_known = all(word.known for child in command.inner for word in child.words)
    if command.runs is Runs.INSTEAD and command.inner and inner_known:
        inner = [_for_command(child) for child in command.inner]
        if all(proposal.unsavable is None for proposal in inner):
            return Proposal(tuple(rule for proposal in inner for rule in proposal.rules))
    if command.runs is not Runs.ITSELF or any(not word.known for word in command.words):
        return _exact_or_prefix(command, free_text_ends=False)
    return _exact_or_prefix(command, free_text_ends=True)


def _exact_or_prefix(command: Command, free_text_ends: bool) -> Proposal:
    words = command.words
    for index, word in enumerate(words[1:], start=1):
        if not word.known:
            if index < 2 or command.runs is not Runs.ITSELF:
                return Proposal((), f"`{command.shown()}` changes with each run ({word.problem})")
            return Proposal((_bash_rule(words[:index], prefix=True),))
        if free_text_ends and index >= 2 and _free_text(command, index):
            return Proposal((_bash_rule(words[:index], prefix=True),))
    return Proposal((_bash_rule(words, prefix=False),))


def _free_text(command: Command, index: int) -> bool:
    text = command.words[index].text
    if not any(char.isspace() for char in text):
        return False
    program = command.program or ""
    before = command.words[index - 1].text
    return not (program in SHELLS or is_interpreter(program) or before in _CODE_FLAGS)


def _bash_rule(words: tuple[Any, ...], prefix: bool) -> str:
    body = " ".join(shlex.quote(word.text) for word in words)
    return f"Bash({body}{':*' if prefix else ''})"


def _for_fetch(args: Mapping[str, Any]) -> Proposal:
    """The fetch's host: `WebFetch(domain:docs.python.org)` (it covers its subdomains too)."""
    host = url_host(args.get("url"))
    if not host:
        return Proposal((), "the URL names no host a rule could allow")
    return Proposal((domain_rule(host),))


def _for_call(tool: str, args: Mapping[str, Any], cwd: str | Path, ruleset: RuleSet) -> str:
    name = _RULE_NAMES.get(tool, tool)
    path = args.get("path")
    if tool not in _RULE_NAMES or not isinstance(path, str):
        return name
    absolute = os.path.normpath(os.path.join(os.fspath(cwd), os.path.expanduser(path)))
    family = "Read" if tool in ("read", "glob", "grep") else "Edit"
    return f"{family}({_path_spec(absolute, ruleset)})"


def _path_spec(absolute: str, ruleset: RuleSet) -> str:
    for base, lead in ((ruleset.project_root, "./"), (ruleset.home, "~/")):
        if absolute.startswith(base.rstrip("/") + "/"):
            return lead + _escaped(absolute[len(base.rstrip("/")) + 1 :])
    return "/" + _escaped(absolute)


def _escaped(path: str) -> str:
    return _GLOB_CHARS.sub(r"\\\1", path)


def save_allow_rules(project_root: str | Path, rules: Iterable[str]) -> Path:
    """Add rules to `permissions.allow` in `.caretz/settings.json`, keeping everything else.

    Read and written through the door (sandbox/door.py): no symlink followed below the
    project's root, the new file renamed over the old; a Refused (an OSError) names why."""
    data = read_project_settings(project_root)
    permissions = data.setdefault("permissions", {})
    allow = permissions.setdefault("allow", [])
    allow += [rule for rule in rules if rule not in allow]
    text = json.dumps(data, indent=2) + "\n"
    return write_beneath(Path(project_root), PROJECT_SETTINGS.as_posix(), text.encode())
