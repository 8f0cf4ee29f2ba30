"""Precedence: a flag, then a CARETZ_* variable, then the profile, then the default → Settings.

Each setting is decided on its own. Nothing here reads os.environ: callers pass
the environment in, so tests pass a plain dict.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from caretz.config.errors import describe_validation_error
from caretz.config.loading import config_path, data_dir, load_config_file
from caretz.config.overrides import ENV_VARIABLES, Flags, Overrides, read_flags
from caretz.config.schema import ConfigFile, Output, Profile
from caretz.config_base import ConfigError
from caretz.goal.config import EvaluatorConfig, GoalConfig
from caretz.guard.config import JudgeConfig, LoopGuardConfig
from caretz.messages import Reasoning
from caretz.permissions.modes import PermissionMode
from caretz.pricing import Price
from caretz.providers.model_limits import ModelLimits, limits_for
from caretz.providers.registry import ProviderEntry
from caretz.providers.resolve import (
    CUSTOM_PROVIDER,
    ResolvedModel,
    merged_providers,
    resolve_model,
)
from caretz.sandbox.config import SandboxConfig
from caretz.sandbox.policy import SandboxMode

DEFAULT_PROFILE = "general"


@dataclass(frozen=True)
class Settings:
    """The resolved settings: the selected profile with every override applied, and
    what it resolves to (the model's endpoint, the providers, the prices)."""

    config_path: Path
    data_dir: Path
    profile_name: str
    profile: Profile  # the profile with every override applied
    model: ResolvedModel
    providers: dict[str, ProviderEntry]  # built-ins + file, env base URLs applied
    prices: dict[str, Price]  # the file's entries; pricing.price_for adds the built-ins
    judge_source: str  # where the judge model was set, for error messages
    goal_source: str = "goal.judge.model"  # where the goal's evaluator model was set
    # --allowed-tools / --disallowed-tools: rules for this run only, by flag.
    run_rules: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # --image: files attached to the prompt (to the first one, in an interactive session).
    images: tuple[str, ...] = ()

    @property
    def model_limits(self) -> ModelLimits:
        """The model's window, output limit and thinking, from caretz's table."""
        return limits_for(self.model.model_id)

    @property
    def reasoning(self) -> Reasoning:
        """The profile's reasoning; unset: medium for a model that thinks, else off."""
        if self.profile.reasoning is not None:
            return self.profile.reasoning
        return self.model_limits.default_reasoning(self.model.entry.protocol)

    @property
    def max_tokens(self) -> int:
        """The profile's maxTokens; unset: the model's (capped, see model_limits.py)."""
        return self.profile.max_tokens or self.model_limits.default_max_tokens

    @property
    def max_tool_calls(self) -> int | None:
        return self.profile.max_tool_calls

    @property
    def max_budget_usd(self) -> float | None:
        return self.profile.max_budget_usd

    @property
    def bash_timeout_s(self) -> float:
        return self.profile.bash_timeout_s

    @property
    def output(self) -> Output:
        return self.profile.output

    @property
    def system_prompt(self) -> str | None:
        return self.profile.system_prompt

    @property
    def context_window(self) -> int:
        """The profile's contextWindow; unset: the model's (a server's report may lower it)."""
        return self.profile.context_window or self.model_limits.context_window

    @property
    def loop_guard(self) -> LoopGuardConfig:
        return self.profile.loop_guard

    @property
    def permission_mode(self) -> PermissionMode:
        """auto, ask, read-only or yolo: what runs without asking (docs/security.md)."""
        return self.profile.permissions.mode

    @property
    def goal(self) -> GoalConfig:
        return self.profile.goal

    @property
    def sandbox(self) -> SandboxConfig:
        """The profile's sandbox section, with --sandbox, CARETZ_SANDBOX and --add-dir applied."""
        return self.profile.sandbox

    @property
    def shell_env(self) -> list[str]:
        return self.profile.shell_env

    @property
    def sandbox_mode(self) -> SandboxMode:
        """The mode commands run in: the permission mode `read-only` forces the sandbox's
        read-only mode and `yolo` turns it off; otherwise `sandbox.mode` decides."""
        return sandbox_mode_for(self.sandbox.mode, self.permission_mode)

    def with_profile(self, **updates: Any) -> Settings:
        """These settings with some profile values changed (`loop_guard=…` for /guard)."""
        return dataclasses.replace(self, profile=self.profile.model_copy(update=updates))


# Permission modes that decide the sandbox mode themselves.
PERMISSION_SANDBOX_MODES = {"read-only": SandboxMode.READ_ONLY, "yolo": SandboxMode.OFF}


def sandbox_mode_for(configured: str, permission: str | None) -> SandboxMode:
    """The sandbox mode commands run in, given `sandbox.mode` and the permission mode."""
    return PERMISSION_SANDBOX_MODES.get(permission or "") or SandboxMode(configured)


def read_env_overrides(env: Mapping[str, str]) -> Overrides:
    """The CARETZ_* layer. With none of its variables set there is nothing to
    validate, and pydantic-settings (a noticeable share of start-up) is not loaded."""
    if not any(env.get(name) for name in ENV_VARIABLES):
        return Overrides()
    from caretz.config.env import read_env

    return read_env(env)


def resolve_settings(flags: Flags, env: Mapping[str, str]) -> Settings:
    """The settings for these command-line flags in this environment; a ConfigError
    names the first thing to fix (the file, a flag, a variable, a model ref)."""
    config_flag = flags.get("config")
    path = config_path(env, config_flag)
    file = load_config_file(path, required=bool(config_flag))
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
    return Settings(
        config_path=path,
        data_dir=data_dir(env),
        profile_name=profile_name,
        profile=_overridden(stored, model_ref, base_url, cli, env_layer),
        model=_with_tool_choice(model, stored.tool_choice),
        providers=providers,
        prices=dict(file.prices),
        judge_source=_judge_source(cli, profile_name, path),
        goal_source=_goal_source(cli, profile_name, path),
        run_rules=_run_rules(cli),
        images=tuple(cli.image or ()),
    )


def _run_rules(cli: Overrides) -> dict[str, tuple[str, ...]]:
    """The flags' values as given (runtime/permissions.py reads the rules in them)."""
    given = {"--allowed-tools": cli.allowed_tools, "--disallowed-tools": cli.disallowed_tools}
    return {flag: tuple(values) for flag, values in given.items() if values}


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


def _goal_source(cli: Overrides, profile_name: str, path: Path) -> str:
    if cli.goal_model is not None:
        return "--goal-model"
    return f"{path}: profiles.{profile_name}.goal.judge.model"


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


def _judge_source(cli: Overrides, profile_name: str, path: Path) -> str:
    if cli.loop_guard_model is not None:
        return "--loop-guard-model"
    return f"{path}: profiles.{profile_name}.loopGuard.judge.model"


def resolve_judge_model(settings: Settings) -> ResolvedModel | None:
    """The judge's endpoint, or None when the session's own model judges.

    Call it at start-up: an unknown provider or a malformed ref fails at once.
    A bare judge ID runs on the session's ad hoc --base-url endpoint.
    """
    ref = settings.loop_guard.judge.model
    if ref is None:
        return None
    return _resolve_side_model(settings, ref, settings.judge_source)


def resolve_goal_model(settings: Settings) -> ResolvedModel | None:
    """The goal evaluator's endpoint: `goal.judge.model`, else the loop guard's judge;
    None when the session's own model evaluates. Call it before the goal's first turn:
    an unknown provider or a malformed ref fails at once."""
    ref = settings.goal.judge.model
    if ref is None:
        return resolve_judge_model(settings)
    return _resolve_side_model(settings, ref, settings.goal_source)


def _resolve_side_model(settings: Settings, ref: str, source: str) -> ResolvedModel:
    """A judge's or evaluator's model; a bare ID runs on the session's ad hoc endpoint."""
    session = settings.model
    if "/" not in ref and session.entry.name == CUSTOM_PROVIDER:
        return ResolvedModel(session.entry, ref, ref)
    try:
        return resolve_model(ref, settings.providers, None, {}, config_file=settings.config_path)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None
