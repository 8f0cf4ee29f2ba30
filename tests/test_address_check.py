"""One address check: caretz/addresses.py alone decides whether an address is public.

The network proxy and web_fetch once had a check each, and the proxy's admitted 6to4,
NAT64 and IPv4-compatible addresses that web_fetch's refused. The architecture test below
fails when any other module asks `ipaddress` what an address is (is_private, is_global,
ipv4_mapped, teredo, a network's membership...), packs an address to compare its bits, or
compares a host with an address or prefix of its own (`host.startswith("127.")`,
`host in ("::1", "localhost")`). The rest checks the one function on every special block
and every IPv6 form that carries an IPv4 address, and that both users give its answer.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from caretz.addresses import is_public, names_this_machine, not_public
from caretz.sandbox.netgate import is_public as proxy_is_public
from caretz.web.address import not_public as fetch_not_public

PACKAGE = Path(__file__).resolve().parents[1] / "caretz"
THE_CHECK = PACKAGE / "addresses.py"

# What only caretz/addresses.py may use: ipaddress's judgements and ranges, and packing
# an address into bits.
JUDGEMENTS = frozenset(
    {"is_private", "is_loopback", "is_link_local", "is_global", "is_multicast", "is_reserved",
     "is_unspecified", "is_site_local", "ipv4_mapped", "sixtofour", "teredo", "subnet_of",
     "supernet_of", "overlaps", "network_address", "broadcast_address", "netmask", "hostmask",
     "ip_network", "ip_interface", "IPv4Network", "IPv6Network", "IPv4Interface",
     "IPv6Interface", "inet_pton", "inet_aton"}
)  # fmt: skip
# An address, a prefix of one, or the name of this machine, written as text.
_ADDRESS_TEXT = re.compile(
    r"(?:[0-9]{1,3}\.){1,3}[0-9]{0,3}|[0-9a-fA-F]{0,4}::[0-9a-fA-F:.]*|localhost",
    re.IGNORECASE,
)


def address_checks(source: str) -> list[str]:
    """Where `source` judges an address itself: `line: what`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in JUDGEMENTS:
            found.append(f"{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.Name) and node.id in JUDGEMENTS:
            found.append(f"{node.lineno}: {node.id}")
        elif isinstance(node, ast.alias) and node.name in JUDGEMENTS:
            found.append(f"{node.lineno}: import {node.name}")
        elif isinstance(node, ast.Compare):
            texts = [node.left, *node.comparators]
            if any(_address_text(part) for part in texts):
                found.append(f"{node.lineno}: compares with an address")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("startswith", "endswith")
            and any(_address_text(argument) for argument in node.args)
        ):
            found.append(f"{node.lineno}: .{node.func.attr}(an address)")
    return sorted(found, key=lambda item: int(item.split(":", 1)[0]))


def _address_text(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _ADDRESS_TEXT.fullmatch(node.value) is not None
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_address_text(element) for element in node.elts)
    return False


def test_no_module_but_the_one_check_judges_an_address():
    found = {
        str(path.relative_to(PACKAGE)): checks
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != THE_CHECK and (checks := address_checks(path.read_text()))
    }
    assert found == {}


def test_the_checker_sees_each_way_of_judging_an_address():
    source = """
import ipaddress
from ipaddress import ip_network
def f(host, ip):
    a = ip.is_private or ip.ipv4_mapped is not None or ip.is_global
    b = ip in ipaddress.IPv6Network("64:ff9b::/96")
    c = host.startswith("127.") or host in ("localhost", "::1") or host == "10.0.0.1"
    d = socket.inet_pton(socket.AF_INET6, host)
    e = host.startswith(("fe80::", "192.168."))
    return host.startswith("/tmp") or host == "example.com" or bind(("127.0.0.1", 0))
"""
    found = address_checks(source)
    assert [line.split(": ", 1)[0] for line in found] == [
        "3", "5", "5", "5", "6", "7", "7", "7", "8", "9"
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("10.1.2.3", "a private address"),
        ("172.31.255.255", "a private address"),
        ("192.168.0.1", "a private address"),
        ("127.0.0.2", "a loopback address"),
        ("169.254.169.254", "a link-local address"),
        ("100.64.0.1", "a shared address (carrier-grade NAT)"),
        ("0.0.0.0", "an unspecified address"),
        ("0.1.2.3", "a reserved address"),
        ("192.0.2.10", "a documentation address"),
        ("198.51.100.7", "a documentation address"),
        ("203.0.113.9", "a documentation address"),
        ("198.18.0.1", "a reserved address"),
        ("224.0.0.251", "a multicast address"),
        ("240.0.0.1", "a reserved address"),
        ("255.255.255.255", "a reserved address"),
        ("::", "an unspecified address"),
        ("::1", "a loopback address"),
        ("0:0:0:0:0:0:0:1", "a loopback address"),
        ("fe80::1%eth0", "a link-local address"),
        ("fd12:3456::1", "a private address"),
        ("fec0::1", "a private address"),
        ("ff02::1", "a multicast address"),
        ("2001:db8::1", "a documentation address"),
        ("3fff::1", "a documentation address"),
        ("100::1", "a reserved address"),
        ("4000::1", "a reserved address"),  # outside the global unicast space
        ("::ffff:10.0.0.1", "a private address"),  # IPv4-mapped
        ("::ffff:127.0.0.1", "a loopback address"),
        ("::7f00:1", "a loopback address"),  # IPv4-compatible
        ("::8.8.8.8", "a reserved address"),  # IPv4-compatible, deprecated: never public
        ("2002:7f00:1::1", "a loopback address"),  # 6to4
        ("2002:a9fe:a9fe::", "a link-local address"),
        ("64:ff9b::a00:1", "a private address"),  # NAT64, well-known prefix
        ("64:ff9b::127.0.0.1", "a loopback address"),
        ("64:ff9b:1::808:808", "a private address"),  # NAT64, local-use prefix
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "a documentation address"),  # Teredo client
        ("2001:0:808:808::f7f7:f7f7", "a reserved address"),  # Teredo, public ends: still not
        ("[::1]", "a loopback address"),
        ("example.com", "not an address"),
    ],
)
def test_addresses_that_are_not_public_and_why(address: str, why: str):
    assert not_public(address) == why
    assert not proxy_is_public(address)
    assert fetch_not_public(address) == why


@pytest.mark.parametrize(
    "address",
    ["93.184.216.34", "1.1.1.1", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8",
     "64:ff9b::808:808", "2002:808:808::1", "9.9.9.9"],
)  # fmt: skip
def test_public_addresses(address: str):
    assert is_public(address) and proxy_is_public(address) and fetch_not_public(address) is None


def test_what_names_this_machine():
    assert all(map(names_this_machine, ["localhost", "LOCALHOST.", "127.9.9.9", "[::1]"]))
    assert not any(map(names_this_machine, ["example.com", "10.0.0.1", "::2", "", "local"]))
