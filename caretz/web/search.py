"""Search backends caretz calls itself, for models whose provider has no search of its own:
a SearXNG instance the user runs (its JSON API), the Brave Search API, or Tavily.

The backend's address is the user's own setting, so it is not put through web_fetch's
address checks (a SearXNG often runs on localhost). A key is sent in a header only and
never appears in a message.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from caretz import __version__, inbound

_TAGS = re.compile(r"<[^>]+>")
SNIPPET_CHARS = 400
# Builds the client for one search (tests hand in one that records).
ClientFactory = Callable[[float], httpx.Client]


class SearchFailed(Exception):
    """The backend could not answer; the message says why in one line (no key in it)."""


@dataclass(frozen=True)
class Hit:
    title: str
    url: str
    snippet: str


class Backend(Protocol):
    @property
    def name(self) -> str: ...  # for people: "SearXNG at http://localhost:8888", "Brave Search"

    def search(self, query: str, count: int) -> list[Hit]: ...


def default_client(timeout_s: float) -> httpx.Client:
    return httpx.Client(timeout=timeout_s, follow_redirects=True)


@dataclass
class SearxngBackend:
    url: str  # the instance, e.g. http://localhost:8888
    timeout_s: float = 20.0
    client: ClientFactory = default_client

    @property
    def name(self) -> str:
        return f"SearXNG at {self.url}"

    def search(self, query: str, count: int) -> list[Hit]:
        params = {"q": query, "format": "json"}
        data = _send(self, "GET", f"{self.url}/search", {"params": params})
        return _hits(data.get("results"), "content", count)


@dataclass(kw_only=True)
class BraveBackend:
    key: str
    key_env: str  # where the key came from, for messages
    url: str = "https://api.search.brave.com"
    timeout_s: float = 20.0
    client: ClientFactory = default_client
    name: str = "Brave Search"

    def search(self, query: str, count: int) -> list[Hit]:
        headers = {"X-Subscription-Token": self.key}
        params = {"q": query, "count": str(count)}
        url = f"{self.url}/res/v1/web/search"
        data = _send(self, "GET", url, {"params": params, "headers": headers})
        web = data.get("web")
        if not isinstance(web, dict):
            web = {}
        return _hits(web.get("results"), "description", count)


@dataclass(kw_only=True)
class TavilyBackend:
    key: str
    key_env: str
    url: str = "https://api.tavily.com"
    timeout_s: float = 20.0
    client: ClientFactory = default_client
    name: str = "Tavily"

    def search(self, query: str, count: int) -> list[Hit]:
        body = {"query": query, "max_results": count}
        headers = {"Authorization": f"Bearer {self.key}"}
        data = _send(self, "POST", f"{self.url}/search", {"json": body, "headers": headers})
        return _hits(data.get("results"), "content", count)


def _send(backend: Any, method: str, url: str, options: dict[str, Any]) -> dict[str, Any]:
    headers = {
        "Accept": "application/json",
        "User-Agent": f"caretz/{__version__} (web_search)",
        **options.pop("headers", {}),
    }
    try:
        with backend.client(backend.timeout_s) as client:
            response = client.request(method, url, headers=headers, **options)
    except httpx.TimeoutException:
        raise SearchFailed(f"{backend.name} did not answer within {backend.timeout_s:g}s") from None
    except httpx.HTTPError as error:
        reason = (str(error).strip() or type(error).__name__).splitlines()[0]
        raise SearchFailed(f"{backend.name} could not be reached: {reason}") from None
    if response.status_code in (401, 403):
        raise SearchFailed(_refused(backend, response.status_code))
    if response.status_code >= 400:
        raise SearchFailed(f"{backend.name} answered HTTP {response.status_code}")
    try:
        data = inbound.load_json(response.content, "the answer")
    except inbound.BadInput as problem:
        said = f"{backend.name} answered with something other than JSON as caretz reads it"
        raise SearchFailed(f"{said} ({problem})") from None
    if not isinstance(data, dict):
        raise SearchFailed(f"{backend.name} answered with JSON that is not an object")
    return data


def _refused(backend: Any, status: int) -> str:
    key_env = getattr(backend, "key_env", None)
    if key_env:
        return f"{backend.name} refused the key (HTTP {status}): check {key_env}"
    return (
        f"{backend.name} refused the search (HTTP {status}); SearXNG answers JSON only when "
        "its settings.yml lists json under search.formats"
    )


def _hits(results: Any, snippet_key: str, count: int) -> list[Hit]:
    hits = []
    for item in results if isinstance(results, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("url"), str):
            continue
        hits.append(
            Hit(
                title=_plain(item.get("title")) or item["url"],
                url=inbound.clean_text(item["url"]),
                snippet=_plain(item.get(snippet_key))[:SNIPPET_CHARS],
            )
        )
    return hits[:count]


def _plain(value: Any) -> str:
    """A result's text without the tags some backends mark matches with."""
    if not isinstance(value, str):
        return ""
    return " ".join(html.unescape(_TAGS.sub("", value)).split())
