"""A provider as data: its wire protocol, base URL, key env var and request defaults.

A leaf of caretz.providers: the registry, the protocol classes and the local
model servers all read entries, and none of them is needed to describe one.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

from caretz.lazy_dataclass import lazy_dataclass
from caretz.messages import ProtocolName

DEFAULT_LOAD_TIMEOUT_S = 300.0


@lazy_dataclass(frozen=True, kw_only=True)
class ProviderEntry:
    """One provider: where it is, how it speaks, which key it needs."""

    name: str
    protocol: ProtocolName
    base_url: str
    api_key_env: str | None = None  # None: the endpoint needs no key (local servers)
    base_url_env: str | None = None  # an env var that overrides base_url, as the SDKs do
    headers: dict[str, str] = field(default_factory=dict)
    extra_body: dict[str, Any] = field(default_factory=dict)
    # For requests that offer tools and name no tool_choice themselves.
    tool_choice: str | None = None
    # When a tool call is forced, the reply is started with this text (a trailing
    # assistant message), e.g. "<tool_call>\n" for Hermes-style chat templates.
    tool_call_prefix: str | None = None
    local: LocalModel | None = None  # a GGUF model on a llama.cpp server caretz runs
    # Model ID patterns (fnmatch, lower case) served only through the Responses API:
    # a matching model on this "openai" entry speaks protocol "responses" instead.
    responses_models: tuple[str, ...] = ()


@lazy_dataclass(frozen=True, kw_only=True)
class LocalModel:
    """A provider's `local` section: run this GGUF file on a managed llama.cpp server."""

    model: str | None = None  # the GGUF file; None: the model ID of the ref is the path
    chat_template: str | None = None  # a Jinja file, or "chatml-tools"; None: the model's own
    context_size: int | None = None  # tokens; None: the model's trained context
    threads: int | None = None  # CPU threads; None: llama.cpp decides
    load_timeout_s: float = DEFAULT_LOAD_TIMEOUT_S
