"""Precedence: a flag, then a CARETZ_* variable, then the profile, then the default → Settings.

Each setting is decided on its own. Nothing here reads os.environ: callers pass
the environment in, so tests pass a plain dict.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from caretz.config.flags import (
    DEFAULT_PROFILE,
    Flags,
    goal_source,
    judge_source,
    plain_env,
    plain_flags,
)
from caretz.config.loading import config_path, data_dir, read_json_file
from caretz.config.values import Output, ProfileValues, SandboxValues, of_profile, with_flags
from caretz.config_base import ConfigError
from caretz.lazy import lazy_module
from caretz.lazy_dataclass import lazy_dataclass
from caretz.messages import Reasoning
from caretz.permissions.modes import PermissionMode
from caretz.pricing import Price
from caretz.providers.entry import ProviderEntry
from caretz.providers.model_limits import ModelLimits, limits_for
from caretz.providers.resolve import (
    CUSTOM_PROVIDER,
    DEFAULT_MODEL,
    ResolvedModel,
    merged_providers,
    resolve_model,
)
from caretz.sandbox.policy import SandboxMode

if TYPE_CHECKING:
    from caretz.config import layers
else:
    layers = lazy_module("caretz.config.layers")  # pydantic: only with something to validate

if TYPE_CHECKING:
    from caretz.config.schema import Profile
    from caretz.goal.config import GoalConfig
    from caretz.guard.config import LoopGuardConfig


@lazy_dataclass(frozen=True, kw_only=True)
class Settings:
    """The resolved settings: the selected profile with every override applied, and
    what it resolves to (the model's endpoint, the providers, the prices).

    `values` are what a session reads from the profile, plain. `profile` is the
    validated profile (pydantic): read from the file when there is one; without one it
    is built from the defaults and `flags` the first time it is asked for.
    """

    config_path: Path
    data_dir: Path
    profile_name: str
    values: ProfileValues
    model: ResolvedModel
    providers: dict[str, ProviderEntry]  # built-ins + file, env base URLs applied
    prices: dict[str, Price]  # the file's entries; pricing.price_for adds the built-ins
    judge_source: str  # where the judge model was set, for error messages
    goal_source: str = "goal.judge.model"  # where the goal's evaluator model was set
    # --allowed-tools / --disallowed-tools: rules for this run only, by flag.
    run_rules: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # --image: files attached to the prompt (to the first one, in an interactive session).
    images: tuple[str, ...] = ()
    validated: Profile | None = field(default=None, repr=False, compare=False)
    flags: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @functools.cached_property
    def profile(self) -> Profile:
        """The profile with every override applied (pydantic: built on first use when
        there was no file to validate)."""
        if self.validated is not None:
            return self.validated
        return layers.default_profile(self.flags)

    @property
    def model_limits(self) -> ModelLimits:
        """The model's window, output limit and thinking, from caretz's table."""
        return limits_for(self.model.model_id)

    @property
    def reasoning(self) -> Reasoning:
        """The profile's reasoning; unset: medium for a model that thinks, else off."""
        if self.values.reasoning is not None:
            return self.values.reasoning
        return self.model_limits.default_reasoning(self.model.entry.protocol)

    @property
    def max_tokens(self) -> int:
        """The profile's maxTokens; unset: the model's (capped, see model_limits.py)."""
        return self.values.max_tokens or self.model_limits.default_max_tokens

    @property
    def max_tool_calls(self) -> int | None:
        return self.values.max_tool_calls

    @property
    def max_budget_usd(self) -> float | None:
        return self.values.max_budget_usd

    @property
    def bash_timeout_s(self) -> float:
        return self.values.bash_timeout_s

    @property
    def output(self) -> Output:
        return self.values.output

    @property
    def system_prompt(self) -> str | None:
        return self.values.system_prompt

    @property
    def context_window(self) -> int:
        """The profile's contextWindow; unset: the model's (a server's report may lower it)."""
        return self.values.context_window or self.model_limits.context_window

    @property
    def loop_guard(self) -> LoopGuardConfig:
        """The whole loopGuard section (pydantic); `values.guard_mode` is its mode."""
        return self.profile.loop_guard

    @property
    def permission_mode(self) -> PermissionMode:
        """auto, ask, read-only, plan or yolo: what runs without asking (docs/security.md)."""
        return self.values.permission_mode

    @property
    def goal(self) -> GoalConfig:
        return self.profile.goal

    @property
    def sandbox(self) -> SandboxValues:
        """The profile's sandbox section, with --sandbox, CARETZ_SANDBOX and --add-dir applied."""
        return self.values.sandbox

    @property
    def shell_env(self) -> list[str]:
        return list(self.values.shell_env)

    @property
    def sandbox_mode(self) -> SandboxMode:
        """The mode commands run in: the permission modes `read-only` and `plan` force the sandbox's
        read-only mode and `yolo` turns it off; otherwise `sandbox.mode` decides."""
        return sandbox_mode_for(self.sandbox.mode, self.permission_mode)

    def with_profile(self, **updates: Any) -> Settings:
        """These settings with some profile values changed (`loop_guard=…` for /guard)."""
        profile = self.profile.model_copy(update=updates)
        return dataclasses.replace(self, validated=profile, values=of_profile(profile))


# Permission modes that decide the sandbox mode themselves.
PERMISSION_SANDBOX_MODES = {
    "read-only": SandboxMode.READ_ONLY,
    "plan": SandboxMode.READ_ONLY,
    "yolo": SandboxMode.OFF,
}


def sandbox_mode_for(configured: str, permission: str | None) -> SandboxMode:
    """The sandbox mode commands run in, given `sandbox.mode` and the permission mode."""
    return PERMISSION_SANDBOX_MODES.get(permission or "") or SandboxMode(configured)


def resolve_settings(flags: Flags, env: Mapping[str, str]) -> Settings:
    """The settings for these command-line flags in this environment; a ConfigError
    names the first thing to fix (the file, a flag, a variable, a model ref).

    With no profile file, and CARETZ_* variables and flags the plain checks accept, the
    settings are the defaults with the variables and then the flags applied, and no
    pydantic model is built; anything else is validated as a whole (config/layers.py).
    """
    config_flag = flags.get("config")
    path = config_path(env, config_flag)
    data = read_json_file(path, required=bool(config_flag))
    plain = _plain_overrides(flags, env) if data is None else None
    if plain is not None and plain.get("profile", DEFAULT_PROFILE) == DEFAULT_PROFILE:
        model_source = _model_source(flags, env, path)
        defaults = _defaults(plain, env, path, model_source)
        return _settings(plain, env, path, DEFAULT_PROFILE, *defaults)
    layered = layers.resolve_layered(flags, env, path, data)
    profile = layered.profile
    resolved = (of_profile(profile), layered.model, layered.providers, layered.prices, profile)
    return _settings(flags, env, path, layered.profile_name, *resolved)


def _plain_overrides(flags: Flags, env: Mapping[str, str]) -> dict[str, Any] | None:
    """The variables' values and then the flags' over them (a flag wins, as in the
    layered path), when the plain checks accept every one; else None."""
    from_env = plain_env(env)
    from_flags = plain_flags(flags)
    if from_env is None or from_flags is None:
        return None
    return {**from_env, **from_flags}


def _model_source(flags: Flags, env: Mapping[str, str], path: Path) -> str:
    """Where the model was named, for an error about it."""
    if flags.get("model"):
        return "--model"
    if env.get("CARETZ_MODEL"):
        return "CARETZ_MODEL"
    return f"{path}: profiles.{DEFAULT_PROFILE}.model"


def _defaults(
    flags: Flags, env: Mapping[str, str], path: Path, source: str
) -> tuple[ProfileValues, ResolvedModel, dict[str, ProviderEntry], dict[str, Price], None]:
    """The default profile's values with `flags` (checked by `plain_flags`) applied, its
    model, the providers and (no file) no prices."""
    model_ref = flags.get("model") or DEFAULT_MODEL
    providers = merged_providers({}, env)
    try:
        model = resolve_model(model_ref, providers, flags.get("base_url"), env, config_file=path)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    return with_flags(flags), model, providers, {}, None


def _settings(
    flags: Flags,
    env: Mapping[str, str],
    path: Path,
    profile_name: str,
    values: ProfileValues,
    model: ResolvedModel,
    providers: dict[str, ProviderEntry],
    prices: dict[str, Price],
    profile: Profile | None,
) -> Settings:
    rules = {"--allowed-tools": "allowed_tools", "--disallowed-tools": "disallowed_tools"}
    return Settings(
        config_path=path,
        data_dir=data_dir(env),
        profile_name=profile_name,
        values=values,
        model=model,
        providers=providers,
        prices=prices,
        judge_source=judge_source(flags, profile_name, path),
        goal_source=goal_source(flags, profile_name, path),
        # The flags' values as given (runtime/permissions.py reads the rules in them).
        run_rules={flag: tuple(flags[name]) for flag, name in rules.items() if flags.get(name)},
        validated=profile,
        flags=dict(flags) if profile is None else {},
        images=tuple(flags.get("image") or ()),
    )


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
