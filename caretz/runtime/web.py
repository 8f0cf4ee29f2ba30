"""Wiring the web tools: the profile's `webFetch` and `webSearch` in; the tools, the
provider's own search (how many searches a request may make) and what the system prompt
says of them out.

Search is the provider's own where the model's provider has one and the settings allow it
(`webSearch.server`), else the configured backend's `web_search` tool, else absent (and the
system prompt does not mention it). A `WebSearch` deny or ask rule leaves the provider's
search out, since caretz cannot ask about a search the provider runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Any

from caretz.config_base import ConfigError
from caretz.lazy import lazy_module
from caretz.lazy_dataclass import lazy_dataclass
from caretz.providers.registry import is_explicit_url
from caretz.web.fetch_tool import WebFetchTool
from caretz.web.model import FetchLimits

if TYPE_CHECKING:
    from caretz.web import fetch as web_fetching
    from caretz.web import search as search_backends
    from caretz.web import search_tool as web_search_tool
else:
    web_fetching = lazy_module("caretz.web.fetch")  # httpx: at the first fetch
    # httpx: only with a search backend configured.
    web_search_tool = lazy_module("caretz.web.search_tool")
    search_backends = lazy_module("caretz.web.search")

if TYPE_CHECKING:
    from caretz.config.settings import Settings
    from caretz.config.values import WebFetchValues, WebSearchValues
    from caretz.permissions.policy import RuleSet
    from caretz.tools.base import Tool
    from caretz.tools.permission import SessionPermissions
    from caretz.web.cache import FetchCache
    from caretz.web.fetch import Fetcher
    from caretz.web.search import Backend

SERVER_SEARCH_PROTOCOLS = ("anthropic", "responses")


@lazy_dataclass(frozen=True)
class WebSetup:
    tools: list[Tool] = field(default_factory=list)
    server_search: int | None = None  # searches a request may make; None: not offered
    search_by: str | None = None  # who answers web_search, for the system prompt
    fetch: bool = False


def web_setup(
    settings: Settings,
    env: Mapping[str, str],
    permissions: SessionPermissions,
    cache: FetchCache,
) -> WebSetup:
    """The session's web tools and search. Raises ConfigError for a backend whose key is
    missing (only when that backend is the one used)."""
    tools: list[Tool] = []
    fetch_config = settings.values.web_fetch
    if fetch_config.enabled:
        tools.append(WebFetchTool(fetcher_factory(fetch_config, permissions), cache))
    search = settings.values.web_search
    server = server_search(settings, permissions.rules)
    if server is not None:
        by = "the model provider's own search"
        return WebSetup(tools, server, by, fetch_config.enabled)
    where = f"{settings.config_path}: profiles.{settings.profile_name}.webSearch"
    backend = search_backend(search, env, where)
    if backend is None:
        return WebSetup(tools, None, None, fetch_config.enabled)
    tools.append(web_search_tool.WebSearchTool(backend, search.max_results))
    return WebSetup(tools, None, backend.name, fetch_config.enabled)


def fetcher_factory(
    config: WebFetchValues, permissions: SessionPermissions
) -> Callable[[], Fetcher]:
    """Builds the session's fetcher at the first fetch: the rules are read at each fetch
    (a rule saved since counts), the limits are the profile's."""

    def make() -> Fetcher:
        limits = FetchLimits(config.max_bytes, config.timeout_s, config.max_redirects)
        return web_fetching.Fetcher(limits, lambda: permissions.rules)

    return make


def server_search(settings: Settings, rules: RuleSet) -> int | None:
    """How many searches a request may make with the provider's own search; None: off
    (as the settings say, or a WebSearch deny or ask rule among `rules`)."""
    config = settings.values.web_search
    entry = settings.model.entry
    if config.server is False or entry.protocol not in SERVER_SEARCH_PROTOCOLS:
        return None
    if config.server == "auto" and is_explicit_url(entry):
        return None  # another URL than the provider's own: it may not know the tool
    decision = rules.check("web_search", {}, rules.project_root)
    if decision.outcome in ("deny", "ask"):
        return None
    return config.max_uses


def search_backend(config: WebSearchValues, env: Mapping[str, str], where: str) -> Backend | None:
    """The configured backend; None without one. Raises ConfigError for a missing key."""
    if config.backend is None:
        return None
    if config.backend == "searxng":
        assert config.url is not None  # the section's validator insists
        return search_backends.SearxngBackend(config.url, config.timeout_s)
    key_env = config.key_env
    assert key_env is not None
    key = env.get(key_env, "").strip()
    if not key:
        raise ConfigError(
            f"{where}: backend {config.backend!r} needs an API key in {key_env}: set it, "
            "or remove the backend"
        )
    options: dict[str, Any] = {"url": config.url} if config.url is not None else {}
    if config.backend == "brave":
        return search_backends.BraveBackend(
            key=key, key_env=key_env, timeout_s=config.timeout_s, **options
        )
    return search_backends.TavilyBackend(
        key=key, key_env=key_env, timeout_s=config.timeout_s, **options
    )
