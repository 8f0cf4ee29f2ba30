"""Fixtures for the web tools: the loopback web server, rules, a resolver that knows the
test's own names, and a client factory that fails the test if a fetch tries to connect."""

from __future__ import annotations

import ipaddress
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from caretz.permissions.policy import RuleSet
from caretz.permissions.rules import parse_rule
from caretz.web.address import Address
from caretz.web.fetch import Fetcher
from caretz.web.http import plain_client
from caretz.web.model import FetchLimits, FetchRefused
from tests.web.server import WebServer

DOCS_PAGE = (Path(__file__).resolve().parents[1] / "data" / "web" / "docs_page.html").read_bytes()


@pytest.fixture
def web() -> Iterator[WebServer]:
    with WebServer() as server:
        yield server


def rules(tmp_path: Path, allow: tuple[str, ...] = (), deny: tuple[str, ...] = ()) -> RuleSet:
    parsed = [parse_rule(text, "allow", "test") for text in allow]
    parsed += [parse_rule(text, "deny", "test") for text in deny]
    return RuleSet(parsed, tmp_path)


class Names:
    """A resolver for names only the test knows; counts the lookups."""

    def __init__(self, table: dict[str, list[str]]):
        self.table = table
        self.lookups: list[str] = []

    def __call__(self, host: str, port: int, timeout_s: float) -> list[Address]:
        self.lookups.append(host)
        if host not in self.table:
            raise FetchRefused(f"{host} does not resolve")
        return [ipaddress.ip_address(address) for address in self.table[host]]


class NoConnection:
    """A client factory for fetches that must be refused before any connection."""

    def __init__(self) -> None:
        self.made = 0

    def __call__(self, timeout: httpx.Timeout, verify: object) -> httpx.Client:
        self.made += 1
        raise AssertionError("the fetch tried to connect")


def fetcher(
    ruleset: RuleSet,
    names: Names | None = None,
    limits: FetchLimits | None = None,
    client_factory=plain_client,
) -> Fetcher:
    return Fetcher(
        limits or FetchLimits(),
        lambda: ruleset,
        resolver=names or Names({"localhost": ["127.0.0.1"]}),
        client_factory=client_factory,
    )


def never_cancelled() -> threading.Event:
    return threading.Event()
