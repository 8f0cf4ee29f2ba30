"""caretz's settings: profiles.json + CARETZ_* env + command-line flags → one Settings.

Precedence, highest first: a command-line flag, a CARETZ_* environment variable,
the selected profile in profiles.json, the built-in default. Nothing here reads
os.environ: callers pass the environment in, so tests pass a plain dict.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import re
import types
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from caretz.agent.compaction import DEFAULT_CONTEXT_WINDOW
from caretz.guard.config import JudgeConfig, LoopGuardConfig, parse_duration
from caretz.guard.model import Mode
from caretz.messages import ProtocolName, Reasoning
from caretz.pricing import Price, price_for
from caretz.providers.local import BUILTIN_TEMPLATE, LocalModel
from caretz.providers.registry import BUILTIN_PROVIDERS, ProviderEntry

DEFAULT_MODEL = "anthropic/claude-sonnet-4-5"
DEFAULT_PROFILE = "general"
CONFIG_ENV = "CARETZ_CONFIG"
DATA_DIR_ENV = "CARETZ_DATA_DIR"
CUSTOM_PROVIDER = "custom"
CUSTOM_API_KEY_ENV = "CARETZ_API_KEY"  # the only key ever sent to an ad hoc --base-url

Output = Literal["text", "json", "detailed"]


class ConfigError(Exception):
    """A configuration problem, told in one line that names what to fix (the CLI exits 2)."""


def _check_url(value: str) -> str:
    if not value.startswith(("http://", "https://")):
        raise ValueError(f"{value!r} is not a URL; write it as http://host:port/path")
    return value.rstrip("/")


BaseUrl = Annotated[str, AfterValidator(_check_url)]
ModelRef = Annotated[str, Field(min_length=1)]
ToolCallLimit = Annotated[int, Field(ge=1)]
BudgetUsd = Annotated[float, Field(gt=0)]
ToolChoice = Annotated[str, Field(min_length=1)]  # "auto", "required", "none" or a tool name
CheckEvery = Annotated[int, Field(ge=0)]


# ---------------------------------------------------------------- the file


class _Section(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


def _positive_duration(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError("expected a duration such as '120s', '500ms' or '2m'")
    if parse_duration(value) <= 0:
        raise ValueError("must be longer than 0s")
    return value


class LocalConfig(_Section):
    """A provider's `local` section: a GGUF model on a llama.cpp server caretz runs."""

    model: str | None = None  # None: the model ID of `provider/model` is the file
    chat_template: str | None = None
    context_size: int | None = Field(None, ge=256)
    threads: int | None = Field(None, ge=1)
    load_timeout: str | float = "5m"

    @field_validator("load_timeout", mode="before")
    @classmethod
    def _valid_timeout(cls, value: Any) -> Any:
        return _positive_duration(value)

    def to_local(self, config_dir: Path | None) -> LocalModel:
        template = self.chat_template
        if template and template != BUILTIN_TEMPLATE:
            template = _from_dir(config_dir, template)
        return LocalModel(
            model=_from_dir(config_dir, self.model) if self.model else None,
            chat_template=template,
            context_size=self.context_size,
            threads=self.threads,
            load_timeout_s=parse_duration(self.load_timeout),
        )


def _from_dir(config_dir: Path | None, name: str) -> str:
    """A path from profiles.json: relative ones are relative to the file's folder."""
    path = Path(name).expanduser()
    if config_dir is None or path.is_absolute():
        return str(path)
    return str(config_dir / path)


class ProviderConfig(_Section):
    protocol: ProtocolName | None = None  # required, except with `local` (then "openai")
    base_url: BaseUrl | None = None  # required, except with `local`
    api_key_env: str | None = None  # None: the endpoint needs no key
    base_url_env: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    extra_body: dict[str, Any] = Field(default_factory=dict)
    tool_choice: ToolChoice | None = None
    tool_call_prefix: str | None = None
    local: LocalConfig | None = None

    @model_validator(mode="after")
    def _endpoint(self) -> ProviderConfig:
        if self.local is not None:
            if self.base_url is not None:
                raise ValueError("set either baseUrl (a server you run) or local, not both")
            return self
        missing = [
            key
            for key, value in (("protocol", self.protocol), ("baseUrl", self.base_url))
            if value is None
        ]
        if missing:
            verb = "is" if len(missing) == 1 else "are"
            raise ValueError(
                f"{' and '.join(missing)} {verb} required (or a local section for a GGUF "
                f"model caretz runs itself)"
            )
        return self

    def to_entry(self, name: str, config_dir: Path | None = None) -> ProviderEntry:
        local = self.local.to_local(config_dir) if self.local is not None else None
        return ProviderEntry(
            name=name,
            protocol=self.protocol or "openai",
            base_url=self.base_url or "http://127.0.0.1:0/v1",  # local: the port comes at start
            api_key_env=self.api_key_env,
            base_url_env=self.base_url_env,
            headers=dict(self.headers),
            extra_body=dict(self.extra_body),
            tool_choice=self.tool_choice,
            tool_call_prefix=self.tool_call_prefix,
            local=local,
        )


class Profile(_Section):
    model: ModelRef = DEFAULT_MODEL
    base_url: BaseUrl | None = None
    reasoning: Reasoning = "off"
    max_tokens: int = Field(8192, ge=1)
    max_tool_calls: ToolCallLimit | None = None  # None: no limit
    max_budget_usd: BudgetUsd | None = None  # None: no limit
    bash_timeout: str | float = "120s"
    output: Output = "text"
    system_prompt: str | None = None  # appended to caretz's own system prompt
    tool_choice: ToolChoice | None = None  # replaces the provider's toolChoice
    context_window: int = Field(DEFAULT_CONTEXT_WINDOW, ge=1000)  # tokens; compaction nears it
    loop_guard: LoopGuardConfig = Field(default_factory=LoopGuardConfig)

    @field_validator("bash_timeout", mode="before")
    @classmethod
    def _valid_timeout(cls, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ValueError("expected a duration such as '120s', '500ms' or '2m'")
        if parse_duration(value) <= 0:
            raise ValueError("must be longer than 0s")
        return value

    @property
    def bash_timeout_s(self) -> float:
        return parse_duration(self.bash_timeout)


class ConfigFile(_Section):
    profiles: dict[str, Profile] = Field(default_factory=dict)
    providers: dict[str, ProviderConfig] = Field(default_factory=dict)
    prices: dict[str, Price] = Field(default_factory=dict)

    @field_validator("providers")
    @classmethod
    def _names_without_slash(cls, value: dict[str, ProviderConfig]) -> dict[str, ProviderConfig]:
        for name in value:
            if not name or "/" in name:
                raise ValueError(f"provider name {name!r} must be non-empty and have no '/'")
        return value


def config_path(env: Mapping[str, str], flag: str | Path | None = None) -> Path:
    """--config > CARETZ_CONFIG > <user config dir>/profiles.json."""
    if flag:
        return Path(flag).expanduser()
    if env.get(CONFIG_ENV):
        return Path(env[CONFIG_ENV]).expanduser()
    from platformdirs import user_config_dir

    return Path(user_config_dir("caretz")) / "profiles.json"


def data_dir(env: Mapping[str, str]) -> Path:
    """CARETZ_DATA_DIR > the platform's user data dir. Nothing is created here."""
    if env.get(DATA_DIR_ENV):
        return Path(env[DATA_DIR_ENV]).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("caretz"))


def load_config_file(path: Path, *, required: bool = False) -> ConfigFile:
    """Read and validate profiles.json; a missing file means defaults unless `required`."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if required:
            raise ConfigError(f"{path}: no such file (named by --config)") from None
        return ConfigFile()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(f"{path}: cannot read the file: {reason}") from None
    if not text.strip():
        return ConfigFile()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"(line {exc.lineno}, column {exc.colno})"
        raise ConfigError(f"{path}: not valid JSON: {exc.msg} {where}") from None
    try:
        return ConfigFile.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{path}: {describe_validation_error(ConfigFile, exc)}") from None


# ------------------------------------------------- validation errors, one line


_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def describe_validation_error(root: type[BaseModel], error: ValidationError) -> str:
    """`profiles.general.loopGuard.repeatThreshold: <message>` for the first bad key."""
    grouped: dict[str, list[str]] = {}
    for item in error.errors():
        path = _join_path(_walk(root, item["loc"])[0])
        message = _message(root, item)
        if message not in grouped.setdefault(path, []):
            grouped[path].append(message)
    path, messages = next(iter(grouped.items()))
    more = len(grouped) - 1
    suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    text = "; ".join(messages) + suffix
    return f"{path}: {text}" if path else text


def _message(root: type[BaseModel], item: Any) -> str:
    if item["type"] == "extra_forbidden":
        parent = _walk(root, item["loc"][:-1])[1]
        known = _known_keys(parent)
        close = difflib.get_close_matches(str(item["loc"][-1]), known, n=1)
        if close:
            return f"unknown key (did you mean '{close[0]}'?)"
        return f"unknown key (known keys: {', '.join(known)})" if known else "unknown key"
    return str(item["msg"]).removeprefix("Value error, ")


def _walk(root: Any, loc: tuple[Any, ...]) -> tuple[list[str | int], Any]:
    """The JSON path of an error location, and the type found at its end.

    pydantic adds union member tags ('str', 'float') to locations; they are not
    keys of the file, so the walk stops where the types stop describing JSON.
    """
    parts: list[str | int] = []
    current: Any = root
    for part in loc:
        current = _unwrap_optional(current)
        if _is_model(current):
            field = _field_for_key(current, part)
            current = field.annotation if field is not None else None
        elif get_origin(current) in (dict, list):
            current = get_args(current)[-1]
        elif current is not None:
            break
        parts.append(part)
    return parts, _unwrap_optional(current)


def _join_path(parts: list[str | int]) -> str:
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _PLAIN_KEY.fullmatch(part):
            text += f".{part}" if text else part
        else:
            text += f"[{json.dumps(part)}]"
    return text


def _unwrap_optional(annotation: Any) -> Any:
    if get_origin(annotation) in (Union, types.UnionType):
        members = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(members) == 1:
            return members[0]
    return annotation


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _field_for_key(model: type[BaseModel], key: Any) -> Any:
    for name, field in model.model_fields.items():
        if key in (name, field.alias):
            return field
    return None


def _known_keys(annotation: Any) -> list[str]:
    if not _is_model(annotation):
        return []
    return [field.alias or name for name, field in annotation.model_fields.items()]


# ---------------------------------------------------- the env and flag layers


@dataclass(frozen=True)
class EnvLayer:
    """CARETZ_* variables, validated. Empty values count as unset."""

    profile: str | None = None
    model: str | None = None
    reasoning: Reasoning | None = None
    max_tool_calls: int | None = None
    max_budget_usd: float | None = None
    loop_guard: Mode | None = None


ENV_LAYER_VARS = tuple(f"CARETZ_{f.name.upper()}" for f in dataclasses.fields(EnvLayer))


def read_env_layer(env: Mapping[str, str]) -> EnvLayer:
    """The CARETZ_* layer. With none of its variables set there is nothing to
    validate, and pydantic-settings (a noticeable share of start-up) is not loaded."""
    if not any(env.get(name) for name in ENV_LAYER_VARS):
        return EnvLayer()
    from caretz.env_settings import EnvSettings, MappingEnvSource

    try:
        values = EnvSettings(**MappingEnvSource(EnvSettings, env)())
    except ValidationError as exc:
        item = exc.errors()[0]
        name = f"CARETZ_{str(item['loc'][0]).upper()}"
        raise ConfigError(f"{name}={item['input']!r}: {_message(EnvSettings, item)}") from None
    return EnvLayer(**values.model_dump())


@dataclass(frozen=True)
class CliOverrides:
    """Command-line flags; None means the flag was not given."""

    config: str | Path | None = None
    profile: str | None = None
    model: str | None = None
    base_url: str | None = None
    reasoning: str | None = None
    max_tool_calls: int | None = None
    max_budget_usd: float | None = None
    output: str | None = None
    loop_guard: str | None = None  # the mode
    loop_guard_model: str | None = None
    loop_guard_reasoning: str | None = None
    loop_guard_check_every: int | None = None


class _FlagLayer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: ModelRef | None = None
    base_url: BaseUrl | None = None
    reasoning: Reasoning | None = None
    max_tool_calls: ToolCallLimit | None = None
    max_budget_usd: BudgetUsd | None = None
    output: Output | None = None
    loop_guard: Mode | None = None
    loop_guard_model: ModelRef | None = None
    loop_guard_reasoning: Reasoning | None = None
    loop_guard_check_every: CheckEvery | None = None


def _read_flag_layer(cli: CliOverrides) -> _FlagLayer:
    values = {name: getattr(cli, name) for name in _FlagLayer.model_fields}
    try:
        return _FlagLayer.model_validate(values)
    except ValidationError as exc:
        item = exc.errors()[0]
        flag = "--" + str(item["loc"][0]).replace("_", "-")
        raise ConfigError(f"{flag} {item['input']!r}: {_message(_FlagLayer, item)}") from None


# ---------------------------------------------------------------- model refs


@dataclass(frozen=True)
class ResolvedModel:
    entry: ProviderEntry  # with the effective base URL
    model_id: str  # the ID the endpoint knows
    ref: str  # "provider/model", or the bare ID on an ad hoc endpoint


def resolve_model(
    ref: str,
    providers: Mapping[str, ProviderEntry],
    base_url: str | None,
    env: Mapping[str, str],
    *,
    config_file: Path | None = None,
) -> ResolvedModel:
    """Turn a model ref into the endpoint to call. `providers` = built-ins merged with the file's."""
    if "/" not in ref:
        if not base_url:
            raise ConfigError(
                f"model {ref!r} names no provider: write provider/model, "
                f"e.g. {DEFAULT_MODEL}, or pass --base-url"
            )
        return ResolvedModel(_adhoc_entry(base_url, env), ref, ref)
    provider_name, model_id = ref.split("/", 1)
    if not provider_name or not model_id:
        raise ConfigError(f"model {ref!r} is not provider/model, e.g. {DEFAULT_MODEL}")
    entry = providers.get(provider_name)
    if entry is None:
        where = config_file if config_file is not None else "profiles.json"
        raise ConfigError(
            f"unknown provider {provider_name!r} in model {ref!r}: known providers are "
            f'{", ".join(sorted(providers))}; add one under "providers" in {where}'
        )
    entry = _with_env_base_url(entry, env)
    if base_url:  # a URL given for a local provider means: use that server instead
        entry = dataclasses.replace(entry, base_url=base_url, local=None)
    return ResolvedModel(entry, model_id, ref)


def _adhoc_entry(base_url: str, env: Mapping[str, str]) -> ProviderEntry:
    # Only CARETZ_API_KEY goes to an ad hoc endpoint: a provider's own key
    # (OPENAI_API_KEY...) must never reach a URL the user merely typed.
    key_env = CUSTOM_API_KEY_ENV if env.get(CUSTOM_API_KEY_ENV) else None
    return ProviderEntry(CUSTOM_PROVIDER, "openai", base_url, api_key_env=key_env)


def _with_env_base_url(entry: ProviderEntry, env: Mapping[str, str]) -> ProviderEntry:
    override = env.get(entry.base_url_env) if entry.base_url_env else None
    if not override:
        return entry
    return dataclasses.replace(entry, base_url=override.rstrip("/"), local=None)


def merged_providers(
    file: ConfigFile, env: Mapping[str, str], config_dir: Path | None = None
) -> dict[str, ProviderEntry]:
    """Built-in providers, then the file's (the file wins), with *_BASE_URL env applied.

    Relative local model paths in the file are taken from `config_dir`.
    """
    merged = dict(BUILTIN_PROVIDERS)
    merged.update(
        {name: config.to_entry(name, config_dir) for name, config in file.providers.items()}
    )
    return {name: _with_env_base_url(entry, env) for name, entry in merged.items()}


def api_key_for(entry: ProviderEntry, env: Mapping[str, str]) -> str | None:
    """The key to send to this provider; None when it needs none."""
    if entry.api_key_env is None:
        return None
    key = env.get(entry.api_key_env, "").strip()
    if not key:
        raise ConfigError(f"missing API key for provider {entry.name!r}: set {entry.api_key_env}")
    return key


# ---------------------------------------------------------------- settings


@dataclass(frozen=True)
class Settings:
    config_path: Path
    data_dir: Path
    profile_name: str
    profile: Profile  # the profile with every override applied
    model: ResolvedModel
    providers: dict[str, ProviderEntry]  # built-ins + file, env base URLs applied
    reasoning: Reasoning
    max_tokens: int
    max_tool_calls: int | None
    max_budget_usd: float | None
    bash_timeout_s: float
    output: Output
    system_prompt: str | None
    loop_guard: LoopGuardConfig
    prices: dict[str, Price]  # the file's entries; pricing.price_for adds the built-ins
    judge_source: str  # where the judge model was set, for error messages
    context_window: int = DEFAULT_CONTEXT_WINDOW  # tokens the model can take in


def resolve_settings(cli: CliOverrides, env: Mapping[str, str]) -> Settings:
    path = config_path(env, cli.config)
    file = load_config_file(path, required=bool(cli.config))
    env_layer = read_env_layer(env)
    flags = _read_flag_layer(cli)

    profile_name = cli.profile or env_layer.profile or DEFAULT_PROFILE
    stored = _select_profile(file, profile_name, path, _profile_source(cli, env_layer))
    model_ref, model_source = _pick_model(flags, env_layer, stored, profile_name, path)
    base_url = _pick_base_url(flags, stored, model_ref)
    providers = merged_providers(file, env, path.parent.absolute())
    try:
        model = resolve_model(model_ref, providers, base_url, env, config_file=path)
    except ConfigError as exc:
        raise ConfigError(f"{model_source}: {exc}") from None
    if stored.tool_choice is not None:
        entry = dataclasses.replace(model.entry, tool_choice=stored.tool_choice)
        model = dataclasses.replace(model, entry=entry)

    profile = stored.model_copy(
        update={
            "model": model_ref,
            "base_url": base_url,
            **_scalar_overrides(flags, env_layer),
            "loop_guard": _loop_guard_overrides(stored.loop_guard, flags, env_layer),
        },
        deep=True,
    )
    return Settings(
        config_path=path,
        data_dir=data_dir(env),
        profile_name=profile_name,
        profile=profile,
        model=model,
        providers=providers,
        reasoning=profile.reasoning,
        max_tokens=profile.max_tokens,
        max_tool_calls=profile.max_tool_calls,
        max_budget_usd=profile.max_budget_usd,
        bash_timeout_s=profile.bash_timeout_s,
        output=profile.output,
        system_prompt=profile.system_prompt,
        loop_guard=profile.loop_guard,
        prices=dict(file.prices),
        judge_source=_judge_source(flags, profile_name, path),
        context_window=profile.context_window,
    )


def _profile_source(cli: CliOverrides, env_layer: EnvLayer) -> str:
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
    flags: _FlagLayer, env_layer: EnvLayer, stored: Profile, profile_name: str, path: Path
) -> tuple[str, str]:
    if flags.model:
        return flags.model, "--model"
    if env_layer.model:
        return env_layer.model, "CARETZ_MODEL"
    return stored.model, f"{path}: profiles.{profile_name}.model"


def _pick_base_url(flags: _FlagLayer, stored: Profile, model_ref: str) -> str | None:
    # A profile's baseUrl belongs to that profile's endpoint: it serves bare IDs
    # and the profile's own model, but a provider/model picked by flag or env
    # goes to that provider, so its key never reaches the profile's server.
    if flags.base_url:
        return flags.base_url
    if stored.base_url and ("/" not in model_ref or model_ref == stored.model):
        return stored.base_url
    return None


def _scalar_overrides(flags: _FlagLayer, env_layer: EnvLayer) -> dict[str, Any]:
    updates: dict[str, Any] = {}
    for name in ("reasoning", "max_tool_calls", "max_budget_usd"):
        value = getattr(flags, name)
        if value is None:
            value = getattr(env_layer, name)
        if value is not None:
            updates[name] = value
    if flags.output is not None:
        updates["output"] = flags.output
    return updates


def _loop_guard_overrides(
    guard: LoopGuardConfig, flags: _FlagLayer, env_layer: EnvLayer
) -> LoopGuardConfig:
    updates: dict[str, Any] = {}
    mode = flags.loop_guard or env_layer.loop_guard
    if mode is not None:
        updates["mode"] = mode  # the `models` list stays as configured
    if flags.loop_guard_model is not None:
        # A judge named on the command line replaces the configured one whole.
        updates["judge"] = JudgeConfig(
            model=flags.loop_guard_model, reasoning=flags.loop_guard_reasoning
        )
    elif flags.loop_guard_reasoning is not None:
        updates["judge"] = guard.judge.model_copy(update={"reasoning": flags.loop_guard_reasoning})
    if flags.loop_guard_check_every is not None:
        updates["check_every"] = flags.loop_guard_check_every
    return guard.model_copy(update=updates, deep=True)


def _judge_source(flags: _FlagLayer, profile_name: str, path: Path) -> str:
    if flags.loop_guard_model is not None:
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
    session = settings.model
    if "/" not in ref and session.entry.name == CUSTOM_PROVIDER:
        return ResolvedModel(session.entry, ref, ref)
    try:
        return resolve_model(ref, settings.providers, None, {}, config_file=settings.config_path)
    except ConfigError as exc:
        raise ConfigError(f"{settings.judge_source}: {exc}") from None


# ---------------------------------------------------------- `config show`


def show_settings(settings: Settings, env: Mapping[str, str]) -> dict[str, Any]:
    """The resolved settings as JSON-able data. Keys are never shown, only whether they are set."""
    model = settings.model
    model_price = price_for(model.ref, settings.prices)
    return {
        "configPath": str(settings.config_path),
        "configFileExists": settings.config_path.is_file(),
        "dataDir": str(settings.data_dir),
        "profile": settings.profile_name,
        "model": {
            "ref": model.ref,
            "provider": model.entry.name,
            "modelId": model.model_id,
            **_show_provider(model.entry, env),
        },
        "reasoning": settings.reasoning,
        "maxTokens": settings.max_tokens,
        "maxToolCalls": settings.max_tool_calls,
        "maxBudgetUsd": settings.max_budget_usd,
        "bashTimeoutSeconds": settings.bash_timeout_s,
        "output": settings.output,
        "systemPrompt": settings.system_prompt,
        "contextWindow": settings.context_window,
        "loopGuard": settings.loop_guard.model_dump(mode="json", by_alias=True),
        "providers": {
            name: _show_provider(entry, env) for name, entry in sorted(settings.providers.items())
        },
        "prices": {
            glob: price.model_dump(mode="json", by_alias=True, exclude_none=True)
            for glob, price in settings.prices.items()
        },
        "modelPrice": model_price.model_dump(mode="json", by_alias=True) if model_price else None,
    }


def _show_provider(entry: ProviderEntry, env: Mapping[str, str]) -> dict[str, Any]:
    if entry.api_key_env is None:
        key_status = "not needed"
    else:
        key_status = "set" if env.get(entry.api_key_env, "").strip() else "not set"
    # Header and extra-body values may hold tokens: only their names are shown.
    shown: dict[str, Any] = {
        "protocol": entry.protocol,
        "baseUrl": entry.base_url,
        "apiKeyEnv": entry.api_key_env,
        "apiKey": key_status,
        "headers": sorted(entry.headers),
        "extraBody": sorted(entry.extra_body),
        "toolChoice": entry.tool_choice,
        "toolCallPrefix": entry.tool_call_prefix,
    }
    if entry.local is not None:
        shown["baseUrl"] = "a free loopback port, picked when caretz starts the server"
        shown["local"] = {
            "model": entry.local.model,
            "chatTemplate": entry.local.chat_template,
            "contextSize": entry.local.context_size,
            "threads": entry.local.threads,
            "loadTimeoutSeconds": entry.local.load_timeout_s,
        }
    return shown
