"""Running a custom slash command on a session: its prompt, its model, its allowed tools.

`prepare` reads everything that can be wrong first (a rule in `allowed-tools` caretz
cannot read, a model it cannot resolve) as a ConfigError naming the file; a session
then runs it (caretz/app/command_run.py) on its `model`, with its `allowed-tools` as
allow rules for that turn only: deny and ask rules still win, and no command leaves the
sandbox on their strength.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from caretz.config_base import ConfigError
from caretz.lazy import lazy_module
from caretz.permissions.project import RuleError
from caretz.providers.resolve import CUSTOM_PROVIDER
from caretz.runtime import project_trust
from caretz.runtime.models import resolve_model_switch
from caretz.slash_commands.expand import expand
from caretz.slash_commands.files import Catalog, CustomCommand

if TYPE_CHECKING:
    from caretz.permissions import rules as rule_parsing
    from caretz.runtime import permissions as runtime_permissions
else:
    # the rules' parser: once one is prepared
    rule_parsing = lazy_module("caretz.permissions.rules")
    # The tool registry's modules: the REPL imports this module before its session opens, and
    # the session loads them once its start's probes run (runtime/probes.py).
    runtime_permissions = lazy_module("caretz.runtime.permissions")

if TYPE_CHECKING:
    from caretz.config.settings import Settings
    from caretz.permissions.rules import Rule


@dataclass(frozen=True)
class PreparedCommand:
    command: CustomCommand
    prompt: str  # the prompt with its arguments filled in
    rules: tuple[Rule, ...]  # allowed-tools, as allow rules
    model: str | None  # the model ref its turn runs on; None: the session's


def catalog_for(settings: Settings, workspace: Path, reserved: Iterable[str] = ()) -> Catalog:
    """The custom commands a session in `workspace` has; `reserved`: built-in names. Read
    by the project's gate (runtime/project_trust.py), through the project's door."""
    return project_trust.command_catalog(settings, workspace, reserved)


def prepare(
    settings: Settings, command: CustomCommand, arguments: str, env: Mapping[str, str]
) -> PreparedCommand:
    """The command ready to run; raises ConfigError for a rule or a model it cannot use."""
    source = f"{command.path}: allowed-tools"
    extra = frozenset(runtime_permissions.session_tool_names())
    try:
        rules = tuple(
            rule_parsing.parse_rule(text, "allow", source, extra) for text in command.allowed_tools
        )
    except RuleError as error:
        raise ConfigError(str(error)) from None
    model = None
    if command.model is not None:
        try:
            model = resolve_model_switch(settings, _with_provider(settings, command.model), env).ref
        except ConfigError as error:
            raise ConfigError(f"{command.path}: model: {error}") from None
    return PreparedCommand(command, expand(command.prompt, arguments), rules, model)


def _with_provider(settings: Settings, ref: str) -> str:
    """A bare model ID (`claude-haiku-4-5`, as Claude Code's files write it) is on the
    session's provider; on an ad hoc endpoint it stays bare, for that endpoint."""
    provider = settings.model.entry.name
    if "/" in ref or provider == CUSTOM_PROVIDER:
        return ref
    return f"{provider}/{ref}"
