"""Providers as data: a name maps to a wire protocol, a base URL and a key env var.

Adding a provider is adding an entry (here or under "providers" in profiles.json);
adding a wire protocol is adding a class to PROTOCOLS.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from caretz.providers.base import ProtocolName, Provider, ProviderError


@dataclass(frozen=True)
class ProviderEntry:
    name: str
    protocol: ProtocolName
    base_url: str
    api_key_env: str | None = None  # None: the endpoint needs no key (local servers)
    base_url_env: str | None = None  # an env var that overrides base_url, as the SDKs do
    headers: dict[str, str] = field(default_factory=dict)
    extra_body: dict[str, Any] = field(default_factory=dict)


BUILTIN_PROVIDERS: dict[str, ProviderEntry] = {
    entry.name: entry
    for entry in [
        ProviderEntry(
            "anthropic",
            "anthropic",
            "https://api.anthropic.com",
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_BASE_URL",
        ),
        ProviderEntry(
            "openai", "openai", "https://api.openai.com/v1", "OPENAI_API_KEY", "OPENAI_BASE_URL"
        ),
        ProviderEntry(
            "chatgpt", "openai", "https://api.openai.com/v1", "OPENAI_API_KEY", "OPENAI_BASE_URL"
        ),
        ProviderEntry("openrouter", "openai", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
        ProviderEntry("groq", "openai", "https://api.groq.com/openai/v1", "GROQ_API_KEY"),
        ProviderEntry("deepseek", "openai", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"),
        ProviderEntry("mistral", "openai", "https://api.mistral.ai/v1", "MISTRAL_API_KEY"),
        ProviderEntry("ollama", "openai", "http://127.0.0.1:11434/v1", None, "OLLAMA_BASE_URL"),
        ProviderEntry("lmstudio", "openai", "http://127.0.0.1:1234/v1", None),
    ]
}


def _anthropic(entry: ProviderEntry, api_key: str | None, **options: Any) -> Provider:
    from caretz.providers.anthropic import AnthropicProvider

    return AnthropicProvider(entry, api_key, **options)


def _openai(entry: ProviderEntry, api_key: str | None, **options: Any) -> Provider:
    from caretz.providers.openai import OpenAIProvider

    return OpenAIProvider(entry, api_key, **options)


# The protocol modules are imported on first use, so importing this module stays cheap.
PROTOCOLS: dict[str, Callable[..., Provider]] = {"anthropic": _anthropic, "openai": _openai}


def create_provider(entry: ProviderEntry, api_key: str | None, **options: Any) -> Provider:
    """A provider for `entry`. Options: base_url, max_retries, sleep, timeout_s, client."""
    factory = PROTOCOLS.get(entry.protocol)
    if factory is None:
        known = ", ".join(sorted(PROTOCOLS))
        raise ProviderError(
            f"provider {entry.name!r} names an unknown protocol {entry.protocol!r}; "
            f"use one of: {known}"
        )
    return factory(entry, api_key, **options)
