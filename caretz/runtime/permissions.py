"""Wiring the permission check: settings and the project's rules in, a session's
`SessionPermissions` and the tool registry under its check out.

Part of the wiring layer (beside runtime.py, which calls it): the rules of the
profile and of `.caretz/settings.json` are read when a session starts, a rule
that cannot be read is a ConfigError naming the file and the rule, and a
/profile or /permissions switch carries the project's rules (read once) over.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from caretz.config_base import ConfigError
from caretz.lazy import lazy_module
from caretz.lazy_dataclass import lazy_dataclass
from caretz.permissions.modes import ModeError, parse_mode
from caretz.permissions.policy import RuleSet
from caretz.permissions.project import PROJECT_SETTINGS, RuleError
from caretz.runtime import project_trust
from caretz.tools.permission import PermissionCheck, SessionPermissions
from caretz.tools.registry import ToolRegistry, default_tools, withheld_effects

if TYPE_CHECKING:
    from caretz.agent.parts import AgentParts
    from caretz.config.settings import Settings
    from caretz.permissions.rules import Rule
    from caretz.session.events import Emit
    from caretz.tools.asking import Asker
    from caretz.tools.base import Tool
    from caretz.tools.policy import BeforeCall
    from caretz.tools.registry import AfterCall

if TYPE_CHECKING:
    from caretz.permissions import settings as rule_reading
else:
    # The rule reader (the rule syntax, the shell's patterns): only with rules to read.
    rule_reading = lazy_module("caretz.permissions.settings")


def commands_sandboxed(settings: Settings) -> bool:
    """Whether bash commands run inside the sandbox (without it, `auto` asks for each one):
    not with `sandbox.mode` off, nor in yolo mode, which turns the sandbox off."""
    return settings.sandbox_mode != "off"


def session_tool_names() -> list[str]:
    """The tools a session has, which rules may name besides the well-known ones."""
    return [tool.spec.name for tool in default_tools()] + ["task"]


def profile_rules(settings: Settings) -> list[Rule]:
    """The profile's permission rules and its disallowedTools (as deny rules).

    Raises ConfigError naming the file and the rule that cannot be read.
    """
    values = settings.values
    if not any(values.permission_rules) and not values.disallowed_tools and not settings.run_rules:
        return []  # nothing to read: the rule reader is not even loaded
    profile = f"profiles.{settings.profile_name}"
    where = f"{settings.config_path.name}: {profile}.permissions"
    lists = settings.values.rule_lists()
    try:
        rules = rule_reading.rules_from_permissions(lists, where, session_tool_names())
    except RuleError as error:
        raise ConfigError(str(error)) from None
    disallowed = settings.values.disallowed()
    try:
        rules += rule_reading.rules_from_disallowed_tools(
            disallowed, rule_reading.DISALLOWED_SOURCE
        )
    except RuleError as error:
        raise ConfigError(f"{settings.config_path}: {profile}.{error}") from None
    return rules + run_rules(settings)


RUN_RULE_FLAGS = {"--allowed-tools": "allow", "--disallowed-tools": "deny"}


def run_rules(settings: Settings) -> list[Rule]:
    """--allowed-tools and --disallowed-tools: rules for this run only (Claude Code's
    --allowedTools forms: several in one value, between commas or spaces)."""
    rules: list[Rule] = []
    for flag, values in settings.run_rules.items():
        texts = [text for value in values for text in split_rules(value)]
        try:
            rules += rule_reading.rules_from_permissions(
                {RUN_RULE_FLAGS[flag]: texts}, flag, session_tool_names()
            )
        except RuleError as error:
            raise ConfigError(str(error)) from None
    return rules


def split_rules(value: str) -> list[str]:
    """`Bash(git log:*) Edit,mcp__time` → the three rules; a space or comma inside
    parentheses belongs to its rule."""
    rules: list[str] = []
    current, depth = "", 0
    for char in value:
        if char in ", " and depth == 0:
            rules, current = [*rules, current] if current else rules, ""
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        current += char
    return [*rules, current] if current else rules


@lazy_dataclass(frozen=True)
class PermissionRules:
    """A session's rules as read when it starts: the profile's (with disallowedTools and
    the run's flags) and the project's `.caretz/settings.json`, whose root they cover."""

    project_root: Path
    project: tuple[Rule, ...]
    profile: tuple[Rule, ...]

    def ruleset(self) -> RuleSet:
        """These rules as the session's permissions check them (before any is saved)."""
        return RuleSet((*self.profile, *self.project), self.project_root)


def read_rules(settings: Settings, trust: project_trust.ProjectTrust) -> PermissionRules:
    """The rules of a session: the profile's, and the project's as its gate read them
    (runtime/project_trust.py): its deny and ask rules always, for they only restrict; its
    allow rules only once the user approved the project's configuration. Raises ConfigError
    for a rule caretz cannot read, naming the file and the rule."""
    config = trust.config
    try:
        written = config.permissions
        project = project_rules(written, session_tool_names()) if written else []
    except RuleError as error:
        raise ConfigError(str(error)) from None
    if not trust.approved:
        project = [rule for rule in project if rule.behavior != "allow"]
    return PermissionRules(config.root, tuple(project), tuple(profile_rules(settings)))


def project_rules(written: Any, tools: list[str]) -> list[Rule]:
    """The rules of the `permissions` object of a project's `.caretz/settings.json`."""
    return rule_reading.rules_from_permissions(written, os.fspath(PROJECT_SETTINGS), tools)


def session_permissions(
    settings: Settings, rules: PermissionRules, asker: Asker | None, emit: Emit
) -> SessionPermissions:
    """A session's permissions: the mode, the rules as read, who asks, its log; a rule
    saved by "yes, always" keeps the project's approval (runtime/project_trust.py)."""
    return SessionPermissions(
        rules.project_root,
        project_rules=rules.project,
        profile_rules=rules.profile,
        mode=settings.permission_mode,
        asker=asker,
        emit=emit,
        sandboxed=commands_sandboxed(settings),
        save_rules=project_trust.save_rules_keeping_approval(settings),
    )


def build_tools(
    permissions: SessionPermissions,
    extra_checks: Sequence[BeforeCall] = (),
    first_checks: Sequence[BeforeCall] = (),
    after_call: Sequence[AfterCall] = (),
    mode: str | None = None,
    sandboxed: bool | None = None,
    extra_tools: Sequence[Tool] = (),
) -> ToolRegistry:
    """The built-in tools under the session's permission check (rules and mode, in every
    guard mode; the user's disallowedTools are deny rules in it). `extra_checks` (the
    session's checkpoints) run after it, so a refused call takes no checkpoint;
    `first_checks` (PreToolUse hooks) before it, so it judges the input they leave.
    `mode` and `sandboxed`: the permission mode the tools are offered for and whether
    commands run sandboxed (default: the permissions' own; a switch builds the tools
    before it sets the new ones there). `extra_tools` (the web tools) join the built-in
    ones; subagents' registries keep them (`ToolRegistry.fresh`)."""
    # The tools follow the mode: read-only offers none that change files, and without
    # a sandbox bash's description promises none.
    sandboxed = permissions.sandboxed if sandboxed is None else sandboxed
    return ToolRegistry(
        [*default_tools(sandboxed=sandboxed), *extra_tools],
        before_call=(*first_checks, PermissionCheck(permissions), *extra_checks),
        after_call=after_call,
        withheld=withheld_effects(mode or permissions.mode),
        sandboxed=sandboxed,
    )


def follow_settings(
    permissions: SessionPermissions, settings: Settings, rules: list[Rule], parts: AgentParts
) -> AgentParts:
    """Carry a session's permissions over to new settings (another profile or mode)."""
    permissions.use_profile_rules(rules)
    permissions.mode = settings.permission_mode
    permissions.sandboxed = commands_sandboxed(settings)
    ctx = dataclasses.replace(parts.tool_ctx, rules=permissions.rules)
    return dataclasses.replace(parts, tool_ctx=ctx)


def with_permission_mode(settings: Settings, mode: str) -> Settings:
    """`settings` in another permission mode; raises ConfigError for an unknown one."""
    try:
        parsed = parse_mode(mode)
    except ModeError as error:
        raise ConfigError(str(error)) from None
    current = settings.profile.permissions
    return settings.with_profile(permissions=current.model_copy(update={"mode": parsed}))
