"""web_search: the backends caretz calls itself (SearXNG, Brave, Tavily) against a real
loopback server speaking their JSON, the tool's output, and which search a session gets
(the provider's own, a backend, or none)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from caretz.config.settings import resolve_settings
from caretz.config_base import ConfigError
from caretz.runtime.web import web_setup
from caretz.tools.base import ToolArgumentError, ToolContext
from caretz.tools.permission import SessionPermissions
from caretz.web.cache import FetchCache
from caretz.web.search import BraveBackend, SearchFailed, SearxngBackend, TavilyBackend
from caretz.web.search_tool import WebSearchTool
from tests.web.server import Route

KEY = "brv-test-secret-0123456789"


def json_route(data: Any, status: int = 200) -> Route:
    return Route(json.dumps(data).encode(), status=status, content_type="application/json")


def query_of(path: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(path).query)


def test_searxng_is_asked_for_json_and_its_results_read(web):
    web.routes["/search"] = json_route(
        {
            "results": [
                {"title": "httpx <b>docs</b>", "url": "https://www.python-httpx.org/",
                 "content": "A next-generation HTTP client &amp; more"},
                {"title": "no url"},
                {"title": "Second", "url": "https://example.org/2", "content": ""},
                {"title": "Third", "url": "https://example.org/3"},
            ]
        }
    )  # fmt: skip
    backend = SearxngBackend(web.url(""))

    hits = backend.search("httpx timeout", 2)

    assert [(hit.title, hit.url, hit.snippet) for hit in hits] == [
        ("httpx docs", "https://www.python-httpx.org/", "A next-generation HTTP client & more"),
        ("Second", "https://example.org/2", ""),
    ]
    (request,) = web.received
    assert query_of(request.path) == {"q": ["httpx timeout"], "format": ["json"]}


def test_searxng_without_json_enabled_says_where_to_turn_it_on(web):
    web.routes["/search"] = Route(b"Forbidden", status=403, content_type="text/plain")
    with pytest.raises(SearchFailed, match="settings.yml lists json under search.formats"):
        SearxngBackend(web.url("")).search("x", 3)


def test_brave_sends_its_key_in_a_header_and_reads_web_results(web):
    web.routes["/res/v1/web/search"] = json_route(
        {"web": {"results": [{"title": "Result", "url": "https://r.example/",
                              "description": "with <strong>marks</strong>"}]}}
    )  # fmt: skip
    backend = BraveBackend(key=KEY, key_env="BRAVE_API_KEY", url=web.url(""))

    (hit,) = backend.search("caretz", 5)

    assert (hit.title, hit.url, hit.snippet) == ("Result", "https://r.example/", "with marks")
    (request,) = web.received
    assert request.headers["x-subscription-token"] == KEY
    assert query_of(request.path) == {"q": ["caretz"], "count": ["5"]}
    assert KEY not in request.path


def test_a_refused_key_names_the_variable_and_never_the_key(web):
    web.routes["/res/v1/web/search"] = json_route({"error": f"bad key {KEY}"}, status=401)
    with pytest.raises(SearchFailed) as failed:
        BraveBackend(key=KEY, key_env="BRAVE_API_KEY", url=web.url("")).search("x", 1)
    assert str(failed.value) == "Brave Search refused the key (HTTP 401): check BRAVE_API_KEY"


def test_tavily_posts_the_query_with_a_bearer_key(web):
    web.routes["/search"] = json_route(
        {"results": [{"title": "T", "url": "https://t.example/", "content": "snippet"}]}
    )
    backend = TavilyBackend(key=KEY, key_env="TAVILY_API_KEY", url=web.url(""))

    (hit,) = backend.search("news", 4)

    assert hit.snippet == "snippet"
    (request,) = web.received
    assert request.method == "POST"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert json.loads(request.body) == {"query": "news", "max_results": 4}


def test_the_tool_lists_results_and_keeps_the_count_within_the_maximum(web, tmp_path):
    web.routes["/search"] = json_route(
        {"results": [{"title": f"R{n}", "url": f"https://e.example/{n}", "content": f"s{n}"}
                     for n in range(10)]}
    )  # fmt: skip
    tool = WebSearchTool(SearxngBackend(web.url("")), max_results=2)

    result = tool.run({"query": "  many   words ", "count": 9}, ToolContext(workspace=tmp_path))

    assert result.ok
    assert result.output.splitlines() == [
        f"Results for 'many words' (SearXNG at {web.url('')}):",
        "1. R0",
        "   https://e.example/0",
        "   s0",
        "2. R1",
        "   https://e.example/1",
        "   s1",
    ]
    with pytest.raises(ToolArgumentError, match="query is empty"):
        tool.run({"query": "   "}, ToolContext(workspace=tmp_path))
    web.routes["/search"] = Route(b"not json", content_type="text/plain")
    failed = tool.run({"query": "x"}, ToolContext(workspace=tmp_path))
    assert not failed.ok and "answered with something other than JSON" in failed.output


# -- which search a session gets ------------------------------------------------------------


def settings_for(tmp_path: Path, profile: dict[str, Any], model: str, **env: str):
    config = tmp_path / "profiles.json"
    config.write_text(json.dumps({"profiles": {"general": profile}}))
    environment = {
        "CARETZ_CONFIG": str(config),
        "CARETZ_DATA_DIR": str(tmp_path / "data"),
        "CARETZ_MODEL": model,
        **env,
    }
    return resolve_settings({}, environment), environment


def setup(tmp_path: Path, profile: dict[str, Any], model: str, deny=(), **env: str):
    from caretz.permissions.rules import parse_rule

    settings, environment = settings_for(tmp_path, profile, model, **env)
    rules = [parse_rule(text, "deny", "test") for text in deny]
    permissions = SessionPermissions(tmp_path, profile_rules=rules)
    return web_setup(settings, environment, permissions, FetchCache())


def names(tools) -> list[str]:
    return [tool.spec.name for tool in tools]


def test_anthropic_s_own_api_gets_its_server_search_and_no_client_tool(tmp_path):
    searxng = {"webSearch": {"backend": "searxng", "url": "http://127.0.0.1:9"}}
    web = setup(tmp_path, searxng, "anthropic/claude-x")
    assert (web.server_search, names(web.tools)) == (5, ["web_fetch"])
    assert web.search_by == "the model provider's own search"


def test_another_url_gets_the_server_search_only_when_told(tmp_path):
    moved = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
    assert setup(tmp_path, {}, "anthropic/claude-x", **moved).server_search is None
    told = {"webSearch": {"server": True, "maxUses": 2}}
    assert setup(tmp_path, told, "anthropic/claude-x", **moved).server_search == 2


def test_a_search_rule_that_denies_or_asks_leaves_the_server_search_out(tmp_path):
    web = setup(tmp_path, {}, "anthropic/claude-x", deny=("WebSearch",))
    assert web.server_search is None and web.search_by is None


def test_without_a_server_search_the_backend_s_tool_is_offered(tmp_path):
    searxng = {"webSearch": {"backend": "searxng", "url": "http://127.0.0.1:9"}}
    web = setup(tmp_path, searxng, "ollama/qwen3")
    assert (web.server_search, names(web.tools)) == (None, ["web_fetch", "web_search"])
    assert web.search_by == "SearXNG at http://127.0.0.1:9"
    off = {"webSearch": {"server": False, "backend": "brave"}, "webFetch": {"enabled": False}}
    web = setup(tmp_path, off, "anthropic/claude-x", BRAVE_API_KEY=KEY)
    assert (web.server_search, names(web.tools), web.fetch) == (None, ["web_search"], False)


def test_no_search_at_all_without_either(tmp_path):
    web = setup(tmp_path, {}, "ollama/qwen3")
    assert (web.server_search, web.search_by, names(web.tools)) == (None, None, ["web_fetch"])


def test_a_backend_without_its_key_is_one_line_naming_the_variable(tmp_path):
    tavily = {"webSearch": {"backend": "tavily", "apiKeyEnv": "MY_TAVILY"}}
    with pytest.raises(ConfigError) as error:
        setup(tmp_path, tavily, "ollama/qwen3")
    assert str(error.value) == (
        f"{tmp_path / 'profiles.json'}: profiles.general.webSearch: backend 'tavily' needs an "
        "API key in MY_TAVILY: set it, or remove the backend"
    )
