"""Where rules come from: `permissions` in a profile or in a project's `.caretz/settings.json`,
and the loop guard's `disallowedTools`. Every rule is read at start; one that cannot be
read raises RuleError (the CLI prints it as one line and exits 2).
"""

from __future__ import annotations

import fnmatch
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from caretz.permissions.legacy import argument_pattern, file_pattern, shell_pattern
from caretz.permissions.policy import RuleSet
from caretz.permissions.project import PROJECT_SETTINGS as PROJECT_SETTINGS
from caretz.permissions.project import find_project_root as find_project_root
from caretz.permissions.rules import BEHAVIORS, TOOL_FAMILIES, Rule, RuleError, parse_rule

DISALLOWED_SOURCE = "loopGuard.detectors.disallowedTools"
_TOOL_NAMES = frozenset(name for family in TOOL_FAMILIES.values() for name in family)


def rules_from_permissions(
    permissions: Mapping[str, Any] | None, source: str, extra_tools: Iterable[str] = ()
) -> list[Rule]:
    """The rules in a `permissions` object: {"allow": […], "ask": […], "deny": […]}."""
    if not permissions:
        return []
    if not isinstance(permissions, Mapping):
        raise RuleError(f"{source}: permissions must be an object with allow, ask and deny lists")
    extra = frozenset(name.lower() for name in extra_tools)
    rules: list[Rule] = []
    for behavior in BEHAVIORS:
        texts = permissions.get(behavior, [])
        if not isinstance(texts, list):
            raise RuleError(f"{source}: permissions.{behavior} must be a list of rule strings")
        rules += [parse_rule(text, behavior, source, extra) for text in texts]
    return rules


def rules_from_disallowed_tools(disallowed: Mapping[str, Any] | None, source: str) -> list[Rule]:
    """`{"bash": ["rm -rf"], "write": ["*.env"]}` as deny rules (see legacy.py for meanings)."""
    rules: list[Rule] = []
    for key, patterns in (disallowed or {}).items():
        if not isinstance(patterns, list):
            raise RuleError(f"{source}.{key}: must be a list of patterns")
        tools = _legacy_tools(key)
        for pattern in patterns:
            if not isinstance(pattern, str):
                raise RuleError(f"{source}.{key}: {pattern!r} is not a pattern string")
            if pattern.strip():
                rules.append(_legacy_rule(key, pattern, tools, f"{source}.{key}"))
    return rules


def _legacy_tools(key: str) -> tuple[frozenset[str], str | None]:
    """(tools, tool glob) a disallowedTools key covers; a key may be a glob (`mcp__*`)."""
    lowered = key.strip().lower()
    if lowered in TOOL_FAMILIES:
        return TOOL_FAMILIES[lowered], None
    if any(char in lowered for char in "*?["):
        matched = frozenset(name for name in _TOOL_NAMES if fnmatch.fnmatchcase(name, lowered))
        family = frozenset(t for name in matched for t in TOOL_FAMILIES.get(name, {name}))
        return family, lowered
    return frozenset({lowered}), None


def _legacy_rule(
    key: str, pattern: str, tools: tuple[frozenset[str], str | None], source: str
) -> Rule:
    covered, glob = tools
    text = json.dumps(pattern)
    base: dict[str, Any] = {"text": text, "behavior": "deny", "source": source, "tools": covered}
    if glob is not None:
        base["tool_pattern"] = glob.rstrip("*") + "*" if glob.endswith("*") else glob
    if pattern.strip() == "*":
        return Rule(**base)
    try:
        if covered == TOOL_FAMILIES["bash"]:
            return Rule(**base, legacy=shell_pattern(pattern))
        if covered & (TOOL_FAMILIES["read"] | TOOL_FAMILIES["write"]):
            return Rule(**base, legacy=file_pattern(pattern))
        return Rule(**base, legacy=argument_pattern(pattern))
    except ValueError as error:
        raise RuleError(f"{source}: the pattern {pattern!r} cannot be read: {error}") from None


def load_rules(
    project_root: str | Path,
    project_settings: Mapping[str, Any] | None = None,
    profile_permissions: Mapping[str, Any] | None = None,
    profile_source: str = "profiles.json",
    disallowed_tools: Mapping[str, Any] | None = None,
    disallowed_source: str = DISALLOWED_SOURCE,
    extra_tools: Iterable[str] = (),
    home: str | None = None,
) -> RuleSet:
    """Every rule of a session: the profile's, the project's (its settings file as the
    project's gate read it), and disallowedTools as denies."""
    extra = tuple(extra_tools)
    rules = [
        *rules_from_permissions(profile_permissions, profile_source, extra),
        *rules_from_permissions(
            (project_settings or {}).get("permissions"), os.fspath(PROJECT_SETTINGS), extra
        ),
        *rules_from_disallowed_tools(disallowed_tools, disallowed_source),
    ]
    return RuleSet(rules, project_root, home)


def disallowed_origin(rule: Rule) -> tuple[str, str] | None:
    """(key, pattern) of a rule read from disallowedTools (`("bash", "rm -rf")`), else None."""
    prefix = DISALLOWED_SOURCE + "."
    if rule.behavior != "deny" or not rule.source.startswith(prefix):
        return None
    return rule.source[len(prefix) :], json.loads(rule.text)
