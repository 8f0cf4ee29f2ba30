"""The settings through pydantic: profiles.json validated, then the CARETZ_* variables
and the flags (`Overrides`) applied to the selected profile.

config/settings.py sends a run here whenever there is something to validate: a profile
file, or a CARETZ_* variable or a flag the plain checks (config/flags.py) leave to the
model. `default_profile` builds the default profile as this path would, for a run that
needed none until something asks for the whole profile.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic import ValidationError

from caretz.config.errors import describe_validation_error
from caretz.config.flags import DEFAULT_PROFILE, ENV_VARIABLES, Flags
from caretz.config.loading import validated_config_file
from caretz.config.overrides import Overrides, read_flags
from caretz.config.schema import ConfigFile, Profile
from caretz.config_base import ConfigError
from caretz.goal.config import EvaluatorConfig, GoalConfig
from caretz.guard.config import JudgeConfig, LoopGuardConfig
from caretz.lazy import lazy_module
from caretz.pricing import Price
from caretz.providers.entry import ProviderEntry
from caretz.providers.resolve import ResolvedModel, merged_providers, resolve_model
from caretz.sandbox.config import SandboxConfig

if TYPE_CHECKING:
    from caretz.config import env as config_env
else:
    config_env = lazy_module("caretz.config.env")  # pydantic-settings: only with a CARETZ_* set


class Layered(NamedTuple):
    """What the validated layers resolve to (config/settings.py makes the Settings)."""

    profile_name: str
    profile: Profile  # the selected profile, every variable and flag applied
    model: ResolvedModel
    providers: dict[str, ProviderEntry]  # built-ins + file, env base URLs applied
    prices: dict[str, Price]  # the file's


def resolve_layered(flags: Flags, env: Mapping[str, str], path: Path, data: Any) -> Layered:
    """The file's JSON (`data`; None: no file) validated, the CARETZ_* variables and the
    flags applied; a ConfigError names the first thing to fix."""
    file = validated_config_file(path, data)
    env_layer = read_env_overrides(env)
    cli = read_flags(flags)

    profile_name = cli.profile or env_layer.profile or DEFAULT_PROFILE
    stored = _select_profile(file, profile_name, path, _profile_source(cli, env_layer))
    model_ref, model_source = _pick_model(cli, env_layer, stored, profile_name, path)
    base_url = _pick_base_url(cli, stored, model_ref)
    providers = merged_providers(file.provider_entries(path.parent.absolute()), env)
    try:
        model = resolve_model(model_ref, providers, base_url, env, config_file=path)
    except ConfigError as exc:
        raise ConfigError(f"{model_source}: {exc}") from None
    profile = _overridden(stored, model_ref, base_url, cli, env_layer)
    model = _with_tool_choice(model, stored.tool_choice)
    return Layered(
        profile_name=profile_name,
        profile=profile,
        model=model,
        providers=providers,
        prices=file.price_table(),
    )


def default_profile(flags: Flags) -> Profile:
    """The default profile with `flags` applied, as `resolve_layered` builds it when
    there is no file and no CARETZ_* variable."""
    cli = read_flags(flags)
    stored = Profile()
    model_ref = cli.model or stored.model
    return _overridden(stored, model_ref, _pick_base_url(cli, stored, model_ref), cli, Overrides())


def read_env_overrides(env: Mapping[str, str]) -> Overrides:
    """The CARETZ_* layer. With none of its variables set there is nothing to
    validate, and pydantic-settings (a noticeable share of start-up) is not loaded."""
    if not any(env.get(name) for name in ENV_VARIABLES):
        return Overrides()
    return config_env.read_env(env)


def _overridden(
    stored: Profile, model_ref: str, base_url: str | None, cli: Overrides, env_layer: Overrides
) -> Profile:
    """The stored profile with every flag and variable applied (the file's objects stay as read)."""
    return stored.model_copy(
        update={
            "model": model_ref,
            "base_url": base_url,
            **_scalar_overrides(cli, env_layer),
            "loop_guard": _loop_guard_overrides(stored.loop_guard, cli, env_layer),
            "permissions": _permission_overrides(stored, cli, env_layer),
            "goal": _goal_overrides(stored.goal, cli),
            "sandbox": _sandbox_overrides(stored.sandbox, cli, env_layer),
        },
        deep=True,
    )


def _with_tool_choice(model: ResolvedModel, tool_choice: str | None) -> ResolvedModel:
    """A profile's toolChoice replaces the provider's."""
    if tool_choice is None:
        return model
    return dataclasses.replace(
        model, entry=dataclasses.replace(model.entry, tool_choice=tool_choice)
    )


def _profile_source(cli: Overrides, env_layer: Overrides) -> str:
    if cli.profile:
        return "--profile"
    return "CARETZ_PROFILE" if env_layer.profile else "the default profile"


def _select_profile(file: ConfigFile, name: str, path: Path, source: str) -> Profile:
    if name in file.profiles:
        return file.profiles[name]
    if name == DEFAULT_PROFILE:
        return Profile()
    if file.profiles:
        known = ", ".join(sorted(file.profiles))
        raise ConfigError(f"unknown profile {name!r} (from {source}): {path} defines {known}")
    if path.is_file():
        raise ConfigError(
            f"unknown profile {name!r} (from {source}): {path} defines no profiles; "
            f'add it under "profiles"'
        )
    raise ConfigError(
        f"unknown profile {name!r} (from {source}): {path} does not exist; "
        f'create it and define the profile under "profiles"'
    )


def _pick_model(
    cli: Overrides, env_layer: Overrides, stored: Profile, profile_name: str, path: Path
) -> tuple[str, str]:
    if cli.model:
        return cli.model, "--model"
    if env_layer.model:
        return env_layer.model, "CARETZ_MODEL"
    return stored.model, f"{path}: profiles.{profile_name}.model"


def _pick_base_url(cli: Overrides, stored: Profile, model_ref: str) -> str | None:
    # A profile's baseUrl belongs to that profile's endpoint: it serves bare IDs
    # and the profile's own model, but a provider/model picked by flag or env
    # goes to that provider, so its key never reaches the profile's server.
    if cli.base_url:
        return cli.base_url
    if stored.base_url and ("/" not in model_ref or model_ref == stored.model):
        return stored.base_url
    return None


def _scalar_overrides(cli: Overrides, env_layer: Overrides) -> dict[str, Any]:
    updates: dict[str, Any] = {}
    for name in ("reasoning", "max_tool_calls", "max_budget_usd", "output"):
        value = getattr(cli, name)
        if value is None:
            value = getattr(env_layer, name)
        if value is not None:
            updates[name] = value
    return updates


def _loop_guard_overrides(
    guard: LoopGuardConfig, cli: Overrides, env_layer: Overrides
) -> LoopGuardConfig:
    guard = _pinned_guard(cli.loop_guard_config) or guard
    updates: dict[str, Any] = {}
    mode = cli.loop_guard or env_layer.loop_guard
    if mode is not None:
        updates["mode"] = mode  # the `models` list stays as configured
    if cli.loop_guard_model is not None:
        # A judge named on the command line replaces the configured one whole.
        updates["judge"] = JudgeConfig(
            model=cli.loop_guard_model, reasoning=cli.loop_guard_reasoning
        )
    elif cli.loop_guard_reasoning is not None:
        updates["judge"] = guard.judge.model_copy(update={"reasoning": cli.loop_guard_reasoning})
    if cli.loop_guard_check_every is not None:
        updates["check_every"] = cli.loop_guard_check_every
    return guard.model_copy(update=updates, deep=True)


def _permission_overrides(stored: Profile, cli: Overrides, env_layer: Overrides) -> Any:
    mode = cli.permission_mode or env_layer.permission_mode
    if mode is None:
        return stored.permissions
    return stored.permissions.model_copy(update={"mode": mode})


def _pinned_guard(text: str | None) -> LoopGuardConfig | None:
    """--loop-guard-config: a whole loopGuard section (a scheduled run's), replacing the
    profile's so that a later profile edit cannot change how the run is guarded."""
    if text is None:
        return None
    try:
        return LoopGuardConfig.model_validate_json(text)
    except ValidationError as exc:
        detail = describe_validation_error(LoopGuardConfig, exc)
        raise ConfigError(f"--loop-guard-config: {detail}") from None


def _goal_overrides(goal: GoalConfig, cli: Overrides) -> GoalConfig:
    updates: dict[str, Any] = {}
    if cli.goal_model is not None:
        # An evaluator named on the command line replaces the configured one whole.
        updates["judge"] = EvaluatorConfig(model=cli.goal_model, reasoning=cli.goal_reasoning)
    elif cli.goal_reasoning is not None:
        updates["judge"] = goal.judge.model_copy(update={"reasoning": cli.goal_reasoning})
    if cli.goal_max_turns is not None:
        updates["max_turns"] = cli.goal_max_turns
    return goal.model_copy(update=updates, deep=True)


def _sandbox_overrides(
    sandbox: SandboxConfig, cli: Overrides, env_layer: Overrides
) -> SandboxConfig:
    updates: dict[str, Any] = {}
    mode = cli.sandbox or env_layer.sandbox
    if mode is not None:
        updates["mode"] = mode
    if cli.add_dir:
        updates["add_dirs"] = [*sandbox.add_dirs, *cli.add_dir]
    return sandbox.model_copy(update=updates, deep=True)
