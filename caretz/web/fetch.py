"""One fetch, hop by hop: each hop's host resolved and its addresses checked, the checked
address connected to, a redirect to another host put to the rules again, and only text
read, within the byte cap and the time limit.

A redirect to another host follows only when an allow rule covers that host; a deny rule
refuses it; otherwise the fetch stops there and says where it leads (`Elsewhere`), so the
model asks for that URL itself and the permission check sees it like any other call.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from caretz import inbound
from caretz.web.address import Address, Resolver, Vetted, system_resolver, vet
from caretz.web.http import ClientFactory, open_response, plain_client, read_body
from caretz.web.markdown import decode_text, html_to_markdown
from caretz.web.model import Elsewhere, FetchLimits, FetchRefused, FetchUnreachable, Page
from caretz.web.rules import RulesSource, named_by_allow_rule, redirect_decision

REDIRECTS = frozenset({301, 302, 303, 307, 308})
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset({"application/json", "application/xml"})
READABLE = "HTML, plain text, Markdown, CSV, JSON or XML"


def parse_url(text: str) -> httpx.URL:
    """The URL to fetch; raises FetchRefused naming what is wrong with it."""
    try:
        url = httpx.URL(text.strip())
        host, _ = url.host, url.raw_host.decode("ascii")  # each may find the name bad
    except (httpx.InvalidURL, ValueError) as error:
        raise FetchRefused(f"{text!r} is not a URL: {error}") from None
    if url.scheme not in ("http", "https"):
        raise FetchRefused(f"{text!r} is not an http:// or https:// URL")
    if not host:
        raise FetchRefused(f"{text!r} names no host")
    if not has_port_or_none(url):
        raise FetchRefused(f"{text!r} names a port no host has (1 to 65535)")
    if url.userinfo:
        raise FetchRefused("a URL with a user name or password in it is not fetched")
    return url.copy_with(fragment=None)


def has_port_or_none(url: httpx.URL) -> bool:
    """Whether the URL's port, if it names one, is a TCP port (httpx reads up to 99999)."""
    return url.port is None or 0 < url.port < 65536


def media_type(content_type: str) -> tuple[str, str | None]:
    """`text/html; charset=UTF-8` → ("text/html", "UTF-8")."""
    kind, *params = content_type.split(";")
    charset = None
    for param in params:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            charset = value.strip().strip('"') or None
    return kind.strip().lower(), charset


def is_text(kind: str) -> bool:
    return (
        kind.startswith("text/")
        or kind in HTML_TYPES
        or kind in TEXT_TYPES
        or kind.endswith(("+json", "+xml"))
    )


class Fetcher:
    """Fetches under the session's rules (read at each fetch) and the profile's limits."""

    def __init__(
        self,
        limits: FetchLimits,
        rules: RulesSource,
        *,
        resolver: Resolver = system_resolver,
        client_factory: ClientFactory = plain_client,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.limits = limits
        self.rules = rules
        self.resolver = resolver
        self.client_factory = client_factory
        self.clock = clock

    def key(self, text: str) -> str:
        """The URL as the cache knows it (no fragment); raises FetchRefused."""
        return str(parse_url(text))

    def fetch(self, text: str, cwd: Path, cancel: threading.Event) -> Page | Elsewhere:
        """The page at `text` (after redirects on the same host or to allowed ones), or
        where it leads; raises FetchRefused."""
        url = parse_url(text)
        deadline = self.clock() + self.limits.timeout_s
        passed: list[str] = []
        exempted: list[str] = []
        for _ in range(self.limits.max_redirects + 1):
            vetted = self._vet(url, deadline)
            if vetted.exempted:
                exempted.append(url.host)
            hop = self._hop(url, vetted, deadline, cancel, passed, exempted)
            if isinstance(hop, Page):
                return hop
            status, location = hop
            target = self._redirect_target(url, location)
            if (target.host, target.port) != (url.host, url.port):
                elsewhere = self._other_host(url, target, status, cwd)
                if elsewhere is not None:
                    return elsewhere
            passed.append(str(url))
            url = target
        raise FetchRefused(f"{text} redirects more than {self.limits.max_redirects} times")

    def _hop(
        self,
        url: httpx.URL,
        vetted: Vetted,
        deadline: float,
        cancel: threading.Event,
        passed: list[str],
        exempted: list[str],
    ) -> Page | tuple[int, str]:
        """One request: the page, or a redirect's status and location. The host's
        addresses are tried in order while one cannot be reached (an IPv6 address on a
        machine without an IPv6 route), each of them checked."""
        *others, last = vetted.addresses
        for address in others:
            try:
                return self._request(url, address, deadline, cancel, passed, exempted)
            except FetchUnreachable:
                continue
        return self._request(url, last, deadline, cancel, passed, exempted)

    def _request(
        self,
        url: httpx.URL,
        address: Address,
        deadline: float,
        cancel: threading.Event,
        passed: list[str],
        exempted: list[str],
    ) -> Page | tuple[int, str]:
        with open_response(url, address, deadline, self.client_factory) as response:
            location = response.headers.get("location")
            if response.status_code in REDIRECTS and location:
                return response.status_code, location
            return self._page(response, url, deadline, cancel, passed, exempted)

    def _vet(self, url: httpx.URL, deadline: float) -> Vetted:
        rules = self.rules()
        written = url.host  # as the URL spells it, as rules read it (bücher.example)
        ascii_host = url.raw_host.decode("ascii")  # as DNS reads it (xn--bcher-kva.example)

        def named(name: str) -> bool:
            spellings = {name, written} if name == ascii_host else {name}
            return any(named_by_allow_rule(rules, spelling) for spelling in spellings)

        return vet(
            ascii_host,
            url.port or (443 if url.scheme == "https" else 80),
            named=named,
            resolver=self.resolver,
            timeout_s=max(deadline - self.clock(), 0.001),
        )

    def _redirect_target(self, url: httpx.URL, location: str) -> httpx.URL:
        try:
            target = url.join(location.strip())
            host, _ = target.host, target.raw_host.decode("ascii")  # each may find it bad
        except (httpx.InvalidURL, ValueError):
            raise FetchRefused(f"{url} redirects to {location!r}, which is not a URL") from None
        if target.scheme not in ("http", "https") or not host or not has_port_or_none(target):
            raise FetchRefused(f"{url} redirects to {location!r}, which web_fetch does not follow")
        if target.userinfo:
            raise FetchRefused(f"{url} redirects to a URL with a user name or password in it")
        return target.copy_with(fragment=None)

    def _other_host(
        self, url: httpx.URL, target: httpx.URL, status: int, cwd: Path
    ) -> Elsewhere | None:
        """None to follow a redirect to another host (an allow rule covers it); Elsewhere
        to stop there; raises FetchRefused when a deny rule covers it."""
        decision = redirect_decision(self.rules(), str(target), cwd)
        if decision is not None and decision.outcome == "deny":
            raise FetchRefused(f"{url} redirects to {target}, and {decision.reason}")
        if decision is not None and decision.outcome == "allow":
            return None
        return Elsewhere(str(url), str(target), status)

    def _page(
        self,
        response: httpx.Response,
        url: httpx.URL,
        deadline: float,
        cancel: threading.Event,
        passed: list[str],
        exempted: list[str],
    ) -> Page:
        kind, charset = media_type(response.headers.get("content-type", ""))
        if not is_text(kind):
            what = f"of type {kind}" if kind else "of no stated type"
            raise FetchRefused(f"{url} is {what}; web_fetch reads only {READABLE}")
        body = read_body(response, url, self.limits.max_bytes, deadline, cancel)
        title, text = "", decode_text(body.data, charset)
        if kind in HTML_TYPES:
            title, text = html_to_markdown(body.data, charset, str(url))
        return Page(
            url=str(url),
            status=response.status_code,
            content_type=kind,
            title=inbound.text(title),
            text=inbound.text(text),
            size=len(body.data),
            truncated=body.truncated,
            redirects=tuple(passed),
            exempted=tuple(dict.fromkeys(exempted)),
        )
