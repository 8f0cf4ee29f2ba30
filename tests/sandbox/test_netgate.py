"""The proxy's checks: listed hosts, addresses checked after DNS, refusals told once, and a
refused host allowed for the session when the user says so."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from caretz.sandbox.allowlist import build_allowlist
from caretz.sandbox.netgate import NOT_LISTED, Admitted, NetworkGate, Refusal, is_public
from caretz.session.records.base import Record
from caretz.session.records.session import SandboxNetworkRefused


def resolver(table: dict[str, list[str]]):
    asked: list[str] = []

    def resolve(host: str, port: int) -> list[str]:
        asked.append(host)
        if host not in table:
            raise OSError("no such name")
        return table[host]

    resolve.asked = asked  # type: ignore[attr-defined]
    return resolve


def gate_for(entries: list[str], table: dict[str, list[str]], pins: dict | None = None):
    return NetworkGate(build_allowlist(entries, pins), resolver(table))


def test_a_listed_name_is_reached_at_the_public_addresses_it_resolves_to():
    gate = gate_for(["pypi.org"], {"pypi.org": ["151.101.0.223", "2a04:4e42::223"]})

    assert gate.admit("PyPI.org", 443) == Admitted(
        "pypi.org", 443, ("151.101.0.223", "2a04:4e42::223")
    )
    assert gate.take_refusals() == []


def test_a_name_not_listed_is_refused_without_asking_dns():
    gate = gate_for(["pypi.org"], {"evil.test": ["93.184.216.34"]})

    refusal = gate.admit("evil.test", 443)

    assert refusal == Refusal("evil.test", 443, NOT_LISTED)
    assert gate.resolve.asked == []  # type: ignore[attr-defined]
    assert 'add "evil.test" to sandbox.network in profiles.json' in refusal.message()


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.0.0.5",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "::1",
        "fe80::1",
        "fd00::1",
        "::ffff:127.0.0.1",
        "64:ff9b::a00:1",
        "224.0.0.1",
        # IPv6 forms that carry an inside IPv4 address: 6to4, IPv4-compatible, NAT64 (both
        # prefixes), Teredo (its client), IPv4-mapped written in hex
        "2002:7f00:1::1",
        "::7f00:1",
        "64:ff9b::7f00:1",
        "64:ff9b:1::a00:1",
        "2001:0:4136:e378:8000:63bf:3fff:fdd2",
        "::ffff:a9fe:a9fe",
    ],
)
def test_a_listed_name_resolving_to_an_inside_address_is_refused(address):
    gate = gate_for(["sneaky.test"], {"sneaky.test": ["93.184.216.34", address]})

    refusal = gate.admit("sneaky.test", 80)

    assert isinstance(refusal, Refusal)
    assert f"it resolves to {address}, which is not a public address" in refusal.reason
    assert not is_public(address)


def test_a_name_that_does_not_resolve_is_refused():
    refusal = gate_for(["gone.test"], {}).admit("gone.test", 443)

    assert isinstance(refusal, Refusal) and refusal.reason == "its name does not resolve"


def test_a_pinned_name_and_a_listed_address_are_reached_as_written():
    gate = gate_for(["index.test", "10.0.0.9"], {}, {"index.test": "127.0.0.1"})

    assert gate.admit("index.test", 8080) == Admitted("index.test", 8080, ("127.0.0.1",))
    assert gate.admit("10.0.0.9", 80) == Admitted("10.0.0.9", 80, ("10.0.0.9",))
    assert gate.resolve.asked == []  # type: ignore[attr-defined]
    assert isinstance(gate.admit("10.0.0.8", 80), Refusal)


def test_what_is_no_host_or_port_is_refused():
    gate = gate_for(["pypi.org"], {})

    assert gate.admit("pypi.org/x", 443).reason == "not a host name"  # type: ignore[union-attr]
    assert gate.admit("pypi.org", 0).reason == "not a port"  # type: ignore[union-attr]


def test_refusals_are_told_once_as_events_and_lines():
    events: list[Record] = []
    gate = gate_for(["pypi.org"], {})
    gate.emit = events.append

    gate.admit("evil.test", 443)
    gate.admit("evil.test", 443)  # a retry: one line
    lines = gate.settle()

    assert lines == [
        "[network] caretz refused a connection to evil.test:443: not in the network "
        'allowlist. To allow it, add "evil.test" to sandbox.network in profiles.json.'
    ]
    assert events == [SandboxNetworkRefused(host="evil.test", port=443, reason=NOT_LISTED)]
    assert gate.settle() == []


def test_the_user_can_allow_a_refused_host_for_the_session():
    asked: list[Sequence[str]] = []
    events: list[str] = []
    gate = gate_for(["pypi.org"], {"files.test": ["93.184.216.34"]})
    gate.emit = lambda record: events.append(record.type)

    def ask(hosts: Sequence[str]) -> list[str]:
        asked.append(list(hosts))
        return ["files.test"]

    gate.ask = ask
    gate.admit("files.test", 443)
    gate.admit("other.test", 443)
    lines = gate.settle()

    assert asked == [["files.test", "other.test"]]
    assert lines[-1] == (
        "[network] the user allowed files.test for this session: run the command again"
    )
    assert events == ["Sandbox.NetworkRefused"] * 2 + ["Sandbox.NetworkAllowed"]
    assert isinstance(gate.admit("files.test", 443), Admitted)
    assert isinstance(gate.admit("other.test", 443), Refusal)
    assert gate.granted() == ["files.test"]


def test_an_inside_address_is_never_offered_and_nobody_is_asked_when_told_not_to():
    asked: list[Sequence[str]] = []
    gate = gate_for(["sneaky.test"], {"sneaky.test": ["127.0.0.1"]})
    gate.ask = lambda hosts: asked.append(list(hosts)) or list(hosts)

    gate.admit("sneaky.test", 80)  # listed, but resolves inside
    gate.admit("169.254.169.254", 80)  # not listed, an inside address
    assert len(gate.settle()) == 2 and asked == []

    gate.admit("public.test", 80)
    assert len(gate.settle(ask=False)) == 1 and asked == []


def test_a_problem_is_told_once():
    gate = gate_for(["pypi.org"], {})
    gate.problem = "the network allowlist needs nsenter"

    assert gate.settle(ask=False) == [
        "[network] the network allowlist needs nsenter; commands have no network"
    ]
    assert gate.settle(ask=False) == []
