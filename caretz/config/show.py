"""`caretz config show`: the resolved settings as JSON-able data, keys never shown.

A profile's settings appear under the keys they have in profiles.json, with
every override applied.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from caretz.config.settings import Settings
from caretz.pricing import price_for
from caretz.providers.entry import ProviderEntry

# Profile keys shown resolved, under "model", instead of as configured.
_SHOWN_UNDER_MODEL = {"model", "base_url", "tool_choice"}


def show_settings(settings: Settings, env: Mapping[str, str]) -> dict[str, Any]:
    """The resolved settings. API keys are never shown, only whether they are set."""
    model = settings.model
    model_price = price_for(model.ref, settings.prices)
    profile = settings.profile.model_dump(mode="json", by_alias=True, exclude=_SHOWN_UNDER_MODEL)
    # An MCP server's env and headers may hold tokens: only their names are shown; its
    # OAuth client secret only as set.
    for server in profile["mcpServers"].values():
        server["env"], server["headers"] = sorted(server["env"]), sorted(server["headers"])
        if (server.get("oauth") or {}).get("clientSecret") is not None:
            server["oauth"]["clientSecret"] = "set"
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
            # What a request uses: the profile's value, else the model family's.
            "family": settings.model_limits.family,
            "contextWindow": settings.context_window,
            "maxTokens": settings.max_tokens,
            "reasoning": settings.reasoning,
        },
        **profile,
        "providers": {
            name: _show_provider(entry, env) for name, entry in sorted(settings.providers.items())
        },
        "prices": {
            glob: price.to_json(exclude_none=True) for glob, price in settings.prices.items()
        },
        "modelPrice": model_price.to_json() if model_price else None,
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
            "loadTimeout": f"{entry.local.load_timeout_s:g}s",  # the profile's key, a duration
        }
    return shown
