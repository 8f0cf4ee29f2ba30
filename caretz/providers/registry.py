"""Providers as data: a name maps to a wire protocol, a base URL and a key env var.

Adding a provider is adding an entry (here or under "providers" in profiles.json);
adding a wire protocol is adding a class to PROTOCOLS. An entry with a `local`
section has no URL of its own: caretz.providers.local starts its server and
points the entry at it before a provider is created.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any

from caretz.lazy import lazy_module
from caretz.messages import Message, ModelRequest
from caretz.providers.base import Provider, ProviderError, StreamEvent
from caretz.providers.entry import LocalModel, ProviderEntry

if TYPE_CHECKING:
    from caretz.providers import anthropic as anthropic_protocol
    from caretz.providers import openai as chat_protocol
    from caretz.providers import openai_responses as responses_protocol
else:
    # Each protocol's module, only when a provider speaks it: importing this module stays cheap.
    anthropic_protocol = lazy_module("caretz.providers.anthropic")
    chat_protocol = lazy_module("caretz.providers.openai")
    responses_protocol = lazy_module("caretz.providers.openai_responses")

# Tool choices that leave the model free not to call a tool.
UNFORCED_TOOL_CHOICES = (None, "auto", "none")

# OpenAI models offered through the Responses API only (or that lose their reasoning
# between tool calls without it): the built-in entries speak "responses" to these.
RESPONSES_MODELS = (
    "*codex*",
    "gpt-5*-pro",
    "gpt-5*-pro-*",
    "o1-pro*",
    "o3-pro*",
    "o3-deep-research*",
    "o4-mini-deep-research*",
    "computer-use-preview*",
)


# Model IDs the built-in providers are known to serve: what `/model` offers on Tab (any
# other ID works too). Each one matches a family of model_limits.TABLE.
KNOWN_MODELS: dict[str, tuple[str, ...]] = {
    "anthropic": (
        "claude-opus-4-5",
        "claude-sonnet-4-5",
        "claude-haiku-4-5",
        "claude-opus-4-1",
        "claude-opus-4-0",
        "claude-sonnet-4-0",
        "claude-3-7-sonnet-latest",
        "claude-3-5-haiku-latest",
    ),
    "openai": (
        "gpt-5.1",
        "gpt-5.1-codex",
        "gpt-5.1-codex-max",
        "gpt-5",
        "gpt-5-mini",
        "gpt-5-nano",
        "gpt-5-codex",
        "gpt-5-pro",
        "gpt-4.1",
        "gpt-4.1-mini",
        "gpt-4.1-nano",
        "gpt-4o",
        "gpt-4o-mini",
        "o3",
        "o4-mini",
    ),
}


def known_model_refs() -> list[str]:
    """`provider/model` for each of KNOWN_MODELS."""
    return [f"{name}/{model}" for name, models in KNOWN_MODELS.items() for model in models]


def _local_entry() -> ProviderEntry:
    # The port is picked when the server starts; the model ID is the GGUF file's path.
    return ProviderEntry(
        name="local", protocol="openai", base_url="http://127.0.0.1:0/v1", local=LocalModel()
    )


BUILTIN_PROVIDERS: dict[str, ProviderEntry] = {
    entry.name: entry
    for entry in [
        ProviderEntry(
            name="anthropic",
            protocol="anthropic",
            base_url="https://api.anthropic.com",
            api_key_env="ANTHROPIC_API_KEY",
            base_url_env="ANTHROPIC_BASE_URL",
        ),
        *(
            ProviderEntry(
                name=name,
                protocol="openai",
                base_url="https://api.openai.com/v1",
                api_key_env="OPENAI_API_KEY",
                base_url_env="OPENAI_BASE_URL",
                responses_models=RESPONSES_MODELS,
            )
            for name in ("openai", "chatgpt")
        ),
        ProviderEntry(
            name="openrouter",
            protocol="openai",
            base_url="https://openrouter.ai/api/v1",
            api_key_env="OPENROUTER_API_KEY",
        ),
        ProviderEntry(
            name="groq",
            protocol="openai",
            base_url="https://api.groq.com/openai/v1",
            api_key_env="GROQ_API_KEY",
        ),
        ProviderEntry(
            name="deepseek",
            protocol="openai",
            base_url="https://api.deepseek.com/v1",
            api_key_env="DEEPSEEK_API_KEY",
        ),
        ProviderEntry(
            name="mistral",
            protocol="openai",
            base_url="https://api.mistral.ai/v1",
            api_key_env="MISTRAL_API_KEY",
        ),
        ProviderEntry(
            name="ollama",
            protocol="openai",
            base_url="http://127.0.0.1:11434/v1",
            api_key_env=None,
            base_url_env="OLLAMA_BASE_URL",
        ),
        ProviderEntry(
            name="lmstudio",
            protocol="openai",
            base_url="http://127.0.0.1:1234/v1",
            api_key_env=None,
        ),
        _local_entry(),
    ]
}


def _anthropic(entry: ProviderEntry, api_key: str | None, **options: Any) -> Provider:
    return anthropic_protocol.AnthropicProvider(entry, api_key, **options)


def _openai(entry: ProviderEntry, api_key: str | None, **options: Any) -> Provider:
    return chat_protocol.OpenAIProvider(entry, api_key, **options)


def _responses(entry: ProviderEntry, api_key: str | None, **options: Any) -> Provider:
    return responses_protocol.ResponsesProvider(entry, api_key, **options)


# The protocol modules are imported on first use (the declarations above).
PROTOCOLS: dict[str, Callable[..., Provider]] = {
    "anthropic": _anthropic,
    "openai": _openai,
    "responses": _responses,
}


def entry_for_model(entry: ProviderEntry, model_id: str) -> ProviderEntry:
    """`entry` as it speaks to `model_id`: "responses" where its model table says so."""
    model = model_id.lower()
    if entry.protocol == "openai" and any(fnmatchcase(model, p) for p in entry.responses_models):
        return dataclasses.replace(entry, protocol="responses")
    return entry


def create_provider(entry: ProviderEntry, api_key: str | None, **options: Any) -> Provider:
    """A provider for `entry`. Options: base_url, max_retries, sleep, timeout_s,
    idle_timeout_s, first_byte_timeout_s, explicit_url (default: whether the entry's URL is
    the user's), client, clock."""
    factory = PROTOCOLS.get(entry.protocol)
    if factory is None:
        known = ", ".join(sorted(PROTOCOLS))
        raise ProviderError(
            f"provider {entry.name!r} names an unknown protocol {entry.protocol!r}; "
            f"use one of: {known}"
        )
    if entry.local is not None:
        raise ProviderError(
            f"provider {entry.name!r} runs a local model: start its server with "
            f"LocalServers.attach (caretz.providers.local) first"
        )
    options.setdefault("explicit_url", is_explicit_url(entry))
    provider = factory(entry, api_key, **options)
    if entry.tool_choice is not None or entry.tool_call_prefix:
        return RequestDefaults(provider, entry)
    return provider


def is_explicit_url(entry: ProviderEntry) -> bool:
    """Whether the entry's URL is one the user gave: not a built-in provider's own."""
    builtin = BUILTIN_PROVIDERS.get(entry.name)
    return builtin is None or builtin.base_url != entry.base_url


def with_request_defaults(request: ModelRequest, entry: ProviderEntry) -> ModelRequest:
    """`request` with the entry's default tool choice and forced-call prefix applied."""
    if not request.tools:
        return request
    choice = request.tool_choice if request.tool_choice is not None else entry.tool_choice
    messages = request.messages
    ends_with_reply = bool(messages) and messages[-1].role == "assistant"
    if entry.tool_call_prefix and choice not in UNFORCED_TOOL_CHOICES and not ends_with_reply:
        messages = [*messages, Message(role="assistant", content=entry.tool_call_prefix)]
    return dataclasses.replace(request, tool_choice=choice, messages=messages)


class RequestDefaults:
    """A provider whose requests get their entry's defaults (tool choice, forced-call prefix).

    Everything else (close, base_url…) is the wrapped provider's.
    """

    def __init__(self, inner: Provider, entry: ProviderEntry):
        self.inner = inner
        self.entry = entry
        self.name = inner.name

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        return self.inner.stream(with_request_defaults(request, self.entry))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
