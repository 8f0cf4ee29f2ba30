"""Providers for resolved models: a local model's server is started first."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from caretz.addresses import names_this_machine
from caretz.config_base import ConfigError
from caretz.lazy import lazy_module
from caretz.providers.model_limits import server_context_window
from caretz.providers.registry import create_provider
from caretz.providers.resolve import CUSTOM_PROVIDER, api_key_for, resolve_model
from caretz.providers.retries import RequestLimits

if TYPE_CHECKING:
    from caretz.providers import local as local_models
else:
    local_models = lazy_module("caretz.providers.local")  # llama.cpp's servers: a local/… model's

if TYPE_CHECKING:
    from caretz.config.settings import Settings
    from caretz.providers.base import Provider
    from caretz.providers.local import LocalServers
    from caretz.providers.resolve import ResolvedModel


def request_limits(settings: Settings) -> RequestLimits:
    """The profile's timeouts and retries, for every provider a session opens."""
    values = settings.values
    return RequestLimits(
        first_byte_timeout_s=values.first_byte_timeout_s,
        idle_timeout_s=values.stream_idle_timeout_s,
        max_retries=values.max_retries,
    )


def open_provider(
    model: ResolvedModel,
    env: Mapping[str, str],
    limits: RequestLimits,
    servers: LocalServers | None = None,
    *,
    role: str = "",
    choose_with: str = "",
    **options: Any,
) -> Provider:
    """A provider for `model`, waiting and retrying as `limits` say; a local model's
    server is started first (once per process). `role` names what the model is for ("the
    loop guard's judge") in a missing key's message, and `choose_with` where another one
    is named; `options` go to the provider (create_provider's).

    Raises ConfigError when the model cannot be reached that way (a missing key, a
    local model that cannot be loaded).
    """
    entry = model.entry
    if entry.local is not None:
        try:
            entry = (servers or local_models.shared_servers()).attach(entry, model.model_id)
        except local_models.LocalServerError as error:
            raise ConfigError(f"{model.ref}: {error}") from None
    try:
        key = api_key_for(entry, env)
    except ConfigError:
        if not role:
            raise
        raise ConfigError(
            f"{role}, {model.ref}, needs {entry.api_key_env}: set it, or name a model your "
            f"keys reach with {choose_with}"
        ) from None
    return create_provider(entry, key, **limits._asdict(), **options)


def served_context_window(provider: Provider) -> int | None:
    """The context a server on this machine says it holds (llama.cpp's `n_ctx`, on
    either protocol: caretz's own `local/…` servers, or one the user runs); None when
    the server is elsewhere or does not say."""
    base_url = getattr(provider, "base_url", None)
    if not isinstance(base_url, str) or not names_this_machine(urlsplit(base_url).hostname or ""):
        return None
    return server_context_window(base_url.removesuffix("/v1"))


def context_window(configured: int, served: int | None) -> int:
    """The window compaction works to: a server's own figure caps the configured one."""
    return min(configured, served) if served else configured


def resolve_model_switch(settings: Settings, ref: str, env: Mapping[str, str]) -> ResolvedModel:
    """`ref` as a session on `settings` would resolve it (a /model switch, a custom
    command's model); a bare ID stays on the session's ad hoc endpoint."""
    base_url = None
    if "/" not in ref:
        current = settings.model.entry
        base_url = (
            current.base_url if current.name == CUSTOM_PROVIDER else settings.profile.base_url
        )
    return resolve_model(ref, settings.providers, base_url, env, config_file=settings.config_path)
