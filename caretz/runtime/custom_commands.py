"""Running a custom slash command on a session: its prompt, its model, its allowed tools.

`prepare` reads everything that can be wrong first (a rule in `allowed-tools` caretz
cannot read, a model it cannot resolve) as a ConfigError naming the file; the
`command_scope` around the command's turn then switches to its `model` and back, and
lets its `allowed-tools` run without asking, as allow rules for that turn only: deny
and ask rules still win, and no command leaves the sandbox on their strength.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from caretz.config_base import ConfigError
from caretz.slash_commands.expand import expand
from caretz.slash_commands.files import Catalog, CustomCommand, command_folders, load_catalog

if TYPE_CHECKING:
    from caretz.config.settings import Settings
    from caretz.permissions.rules import Rule
    from caretz.runtime.session import Session


@dataclass(frozen=True)
class PreparedCommand:
    command: CustomCommand
    prompt: str  # the prompt with its arguments filled in
    rules: tuple[Rule, ...]  # allowed-tools, as allow rules
    model: str | None  # the model ref its turn runs on; None: the session's


def catalog_for(settings: Settings, workspace: Path, reserved: Iterable[str] = ()) -> Catalog:
    """The custom commands a session in `workspace` has; `reserved`: built-in names."""
    from caretz.permissions.settings import find_project_root

    folders = command_folders(find_project_root(workspace), settings.config_path.parent)
    return load_catalog(folders, reserved)


def prepare(
    settings: Settings, command: CustomCommand, arguments: str, env: Mapping[str, str]
) -> PreparedCommand:
    """The command ready to run; raises ConfigError for a rule or a model it cannot use."""
    from caretz.permissions.rules import RuleError, parse_rule
    from caretz.runtime.permissions import session_tool_names
    from caretz.runtime.switches import resolve_model_switch

    source = f"{command.path}: allowed-tools"
    extra = frozenset(session_tool_names())
    try:
        rules = tuple(parse_rule(text, "allow", source, extra) for text in command.allowed_tools)
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
    from caretz.providers.resolve import CUSTOM_PROVIDER

    provider = settings.model.entry.name
    if "/" in ref or provider == CUSTOM_PROVIDER:
        return ref
    return f"{provider}/{ref}"


@contextlib.contextmanager
def command_scope(
    session: Session, prepared: PreparedCommand, env: Mapping[str, str] | None = None
) -> Iterator[None]:
    """The command's model and allowed tools for what runs inside; the session's after.
    A switch that fails raises ConfigError before anything runs."""
    from caretz.runtime.switches import switch_model

    env = os.environ if env is None else env
    before = session.agent.config.model_ref
    switched = prepared.model is not None and prepared.model != before
    if switched:
        assert prepared.model is not None
        switch_model(session, prepared.model, env)
    permissions = session.permissions
    if permissions is not None:
        permissions.use_turn_rules(prepared.rules)
    try:
        yield
    finally:
        if permissions is not None:
            permissions.use_turn_rules(())
        if switched:
            switch_model(session, before, env)
