"""A profile's `webFetch` and `webSearch` sections (docs/web.md, docs/configuration.md)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from caretz.config_base import parse_duration, parse_size
from caretz.config_section import PositiveDuration, PositiveSize, Section

SearchBackend = Literal["searxng", "brave", "tavily"]
# Where each backend's key is read from unless `apiKeyEnv` names another variable.
DEFAULT_KEY_ENVS: dict[str, str] = {"brave": "BRAVE_API_KEY", "tavily": "TAVILY_API_KEY"}


def _check_url(value: str) -> str:
    if not value.startswith(("http://", "https://")):
        raise ValueError(f"{value!r} is not a URL; write it as http://host:port/path")
    return value.rstrip("/")


Url = Annotated[str, AfterValidator(_check_url)]


class WebFetchConfig(Section):
    """`webFetch`: the web_fetch tool and its limits."""

    enabled: bool = True
    max_size: PositiveSize = "5MB"  # read from one response (decompressed); the rest is cut
    timeout: PositiveDuration = "30s"  # for one fetch, redirects included
    max_redirects: int = Field(5, ge=0, le=20)

    @property
    def max_bytes(self) -> int:
        return parse_size(self.max_size)

    @property
    def timeout_s(self) -> float:
        return parse_duration(self.timeout)


class WebSearchConfig(Section):
    """`webSearch`: the provider's own search, else a backend caretz calls itself."""

    # "auto": the provider's search on Anthropic's and OpenAI's own APIs (not on another
    # URL, which may not know the tool); true: on any endpoint of those protocols.
    server: Literal["auto"] | bool = "auto"
    max_uses: int = Field(5, ge=1, le=50)  # searches per request, for the provider's search
    backend: SearchBackend | None = None
    url: Url | None = None  # SearXNG's address; for brave and tavily, another API base URL
    api_key_env: str | None = None  # brave: BRAVE_API_KEY, tavily: TAVILY_API_KEY
    max_results: int = Field(8, ge=1, le=20)
    timeout: PositiveDuration = "20s"

    @property
    def timeout_s(self) -> float:
        return parse_duration(self.timeout)

    @property
    def key_env(self) -> str | None:
        if self.backend is None or self.backend == "searxng":
            return None
        return self.api_key_env or DEFAULT_KEY_ENVS[self.backend]

    @model_validator(mode="after")
    def _backend_needs(self) -> WebSearchConfig:
        if self.backend == "searxng" and self.url is None:
            raise ValueError('backend "searxng" needs url: the address of your SearXNG')
        if self.backend is None and (self.url is not None or self.api_key_env is not None):
            raise ValueError("url and apiKeyEnv belong to a backend: set backend too")
        return self
