"""The plain data of a fetch: its limits, the page it gives, a redirect it hands back, and
the refusals; light to import, so a session that fetches nothing loads nothing more."""

from __future__ import annotations

from dataclasses import dataclass


class FetchRefused(Exception):
    """A fetch caretz will not make (or could not make); the message says why, in one line."""


class FetchTimeout(FetchRefused):
    """The fetch ran past its time limit."""


class FetchCancelled(FetchRefused):
    """The user interrupted the fetch."""


class FetchUnreachable(FetchRefused):
    """No connection could be made to one address (another of the host's may answer)."""


@dataclass(frozen=True)
class FetchLimits:
    max_bytes: int = 5 * 1024 * 1024
    timeout_s: float = 30.0
    max_redirects: int = 5


@dataclass(frozen=True, kw_only=True)
class Page:
    url: str  # where the content came from, after redirects
    status: int
    content_type: str  # the media type, e.g. text/html
    title: str
    text: str  # Markdown for HTML, else the text as it came
    size: int  # bytes read
    truncated: bool  # the response was longer than webFetch.maxSize
    redirects: tuple[str, ...] = ()  # the URLs passed on the way
    exempted: tuple[str, ...] = ()  # hosts an allow rule had to name (not public addresses)


@dataclass(frozen=True)
class Elsewhere:
    """A redirect to another host that no allow rule covers: not followed."""

    url: str  # the URL that redirected
    target: str  # where it points
    status: int
