"""From a model ref to the endpoint to call, and the key to send it.

`provider/model` splits at the first slash and names a provider entry (built-in,
or from profiles.json); a bare model ID runs on an ad hoc `--base-url` endpoint.
Nothing here reads os.environ: callers pass the environment in.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

from caretz.config_base import ConfigError
from caretz.lazy_dataclass import lazy_dataclass
from caretz.providers.entry import ProviderEntry
from caretz.providers.registry import (
    BUILTIN_PROVIDERS,
    KNOWN_MODELS,
    entry_for_model,
)

DEFAULT_MODEL = "anthropic/claude-sonnet-4-5"
CUSTOM_PROVIDER = "custom"
CUSTOM_API_KEY_ENV = "CARETZ_API_KEY"  # the only key ever sent to an ad hoc --base-url


@lazy_dataclass(frozen=True)
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
        return ResolvedModel(adhoc_entry(base_url, env), ref, ref)
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
    return ResolvedModel(entry_for_model(entry, model_id), model_id, ref)


def adhoc_entry(base_url: str, env: Mapping[str, str]) -> ProviderEntry:
    """The entry for a bare model ID on a URL the user typed."""
    # Only CARETZ_API_KEY goes to an ad hoc endpoint: a provider's own key
    # (OPENAI_API_KEY...) must never reach a URL the user merely typed.
    key_env = CUSTOM_API_KEY_ENV if env.get(CUSTOM_API_KEY_ENV) else None
    return ProviderEntry(
        name=CUSTOM_PROVIDER, protocol="openai", base_url=base_url, api_key_env=key_env
    )


def _with_env_base_url(entry: ProviderEntry, env: Mapping[str, str]) -> ProviderEntry:
    override = env.get(entry.base_url_env) if entry.base_url_env else None
    if not override:
        return entry
    return dataclasses.replace(entry, base_url=override.rstrip("/"), local=None)


def merged_providers(
    file_entries: Mapping[str, ProviderEntry], env: Mapping[str, str]
) -> dict[str, ProviderEntry]:
    """Built-in providers, then the file's (the file wins), with *_BASE_URL env applied."""
    merged = {**BUILTIN_PROVIDERS, **file_entries}
    return {name: _with_env_base_url(entry, env) for name, entry in merged.items()}


def api_key_for(entry: ProviderEntry, env: Mapping[str, str]) -> str | None:
    """The key to send to this provider; None when it needs none."""
    if entry.api_key_env is None:
        return None
    key = env.get(entry.api_key_env, "").strip()
    if not key:
        raise ConfigError(missing_key_message(entry, env))
    return key


def missing_key_message(entry: ProviderEntry, env: Mapping[str, str]) -> str:
    """A missing key in one line, with the other ways in: a key that is set (or the
    providers' keys), an OpenAI-compatible server, a GGUF file; never a key's value."""
    others = key_providers(exclude=entry.api_key_env)
    have = [
        f"{var} is set: --model {example_ref(name)}"
        for name, var in others
        if env.get(var, "").strip()
    ]
    if not have:
        (name, variable), rest = others[0], ", ".join(var for _, var in others[1:])
        have = [
            f"another provider's key ({variable} with --model {example_ref(name)}; {rest} likewise)"
        ]
    ways = [
        *have,
        "an OpenAI-compatible server (Ollama, llama.cpp, vLLM, LM Studio) with --base-url "
        "http://127.0.0.1:8080/v1 --model NAME",
        "a GGUF model file with --model local/PATH.gguf (pip install 'caretz[local]')",
    ]
    return (
        f"missing API key for provider {entry.name!r}: set {entry.api_key_env}, or take "
        f"another way in: {'; '.join(ways)}; caretz doctor says what is set up here"
    )


def key_providers(exclude: str | None = None) -> list[tuple[str, str]]:
    """The built-in providers that take a key, one per key variable: (name, variable)."""
    seen = {exclude}
    found: list[tuple[str, str]] = []
    for name, entry in BUILTIN_PROVIDERS.items():
        variable = entry.api_key_env
        if variable is not None and variable not in seen:
            seen.add(variable)
            found.append((name, variable))
    return found


def example_ref(provider: str) -> str:
    """A model of `provider` to name in a hint (the newest known one, else a placeholder)."""
    if DEFAULT_MODEL.startswith(f"{provider}/"):
        return DEFAULT_MODEL
    known = KNOWN_MODELS.get(provider)
    return f"{provider}/{known[0]}" if known else f"{provider}/MODEL"
