"""Whether an address is one the public internet reaches: the one answer caretz gives.

The network proxy (caretz/sandbox/netgate.py) and web_fetch (caretz/web/address.py) both
refuse to connect where a name resolves to an address of the user's own machine or
network unless the user named it, and a provider's base URL on this machine is told
apart (caretz/providers/wire.py); `not_public` decides, for all of them. An address is
public when it is in none of the special-purpose blocks below (IANA's registries:
loopback, private, shared/CGNAT, link-local, multicast, reserved, documentation,
benchmarking, unspecified, discard, ...), and for IPv6 only inside the global unicast
space (2000::/3), so an address of a block allocated later counts as not public until
this table knows it. An IPv6 address that carries an IPv4 one is judged by that IPv4
address first: IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), 6to4
(2002::/16), Teredo (2001::/32: its server and its client), NAT64's well-known prefix
(64:ff9b::/96). Of those, a mapped or NAT64 address reaches the IPv4 address it carries
and is public when that is; a 6to4 one is public when its IPv4 address is; IPv4-compatible
(deprecated) and Teredo ones never are. NAT64's local-use prefix (64:ff9b:1::/48) is a
network's own and never public.

The table is written here, read with `socket.inet_pton`, rather than taken from
`ipaddress`'s `is_global` and `is_private`, whose tables differ between Python versions
(and whose import the start of a run does not need). `tests/test_architecture.py` fails
when code elsewhere asks `ipaddress` for such a property or compares an address with a
range of its own. A leaf: the sandbox and the web tools, which may not import each other,
both use it.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

_FAMILIES = ((socket.AF_INET, 4), (socket.AF_INET6, 6))
_V4_MASK = 0xFFFFFFFF


def _parse(text: str) -> tuple[int, int] | None:
    """(4 or 6, the address as a number) for an IP literal (`[::1]`, `fe80::1%eth0`
    without its zone); None for a name."""
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    text = text.split("%", 1)[0]
    for family, version in _FAMILIES:
        try:
            packed = socket.inet_pton(family, text)
        except (OSError, ValueError):
            continue
        return version, int.from_bytes(packed, "big")
    return None


def _block(text: str) -> tuple[int, int, int]:
    """`10.0.0.0/8` → (version, the prefix's bits, how many bits lie below it)."""
    network, size = text.split("/")
    parsed = _parse(network)
    assert parsed is not None, text
    version, value = parsed
    below = (32 if version == 4 else 128) - int(size)
    return version, value >> below, below


_BLOCKS = [
    (_block(block), why)
    for block, why in [
        ("0.0.0.0/32", "an unspecified address"),
        ("0.0.0.0/8", "a reserved address"),  # "this network"
        ("10.0.0.0/8", "a private address"),
        ("100.64.0.0/10", "a shared address (carrier-grade NAT)"),
        ("127.0.0.0/8", "a loopback address"),
        ("169.254.0.0/16", "a link-local address"),
        ("172.16.0.0/12", "a private address"),
        ("192.0.0.0/24", "a reserved address"),  # IETF protocol assignments
        ("192.0.2.0/24", "a documentation address"),
        ("192.88.99.0/24", "a reserved address"),  # 6to4 relays, deprecated
        ("192.168.0.0/16", "a private address"),
        ("198.18.0.0/15", "a reserved address"),  # benchmarking
        ("198.51.100.0/24", "a documentation address"),
        ("203.0.113.0/24", "a documentation address"),
        ("224.0.0.0/4", "a multicast address"),
        ("240.0.0.0/4", "a reserved address"),  # and the broadcast address
        ("::/128", "an unspecified address"),
        ("::1/128", "a loopback address"),
        ("64:ff9b:1::/48", "a private address"),  # NAT64 for a network's own use
        ("100::/64", "a reserved address"),  # discard-only
        ("2001::/23", "a reserved address"),  # IETF protocol assignments, Teredo among them
        ("2001:db8::/32", "a documentation address"),
        ("3fff::/20", "a documentation address"),
        ("5f00::/16", "a reserved address"),  # segment routing
        ("fc00::/7", "a private address"),  # unique local
        ("fe80::/10", "a link-local address"),
        ("fec0::/10", "a private address"),  # site-local, deprecated
        ("ff00::/8", "a multicast address"),
    ]
]
_GLOBAL_UNICAST = _block("2000::/3")
_MAPPED = _block("::ffff:0:0/96")
_COMPATIBLE = _block("::/96")
_NAT64 = _block("64:ff9b::/96")
_TEREDO = _block("2001::/32")
_SIX_TO_FOUR = _block("2002::/16")


def not_public(address: object) -> str | None:
    """Why `address` (text, or an `ipaddress` address) is not one the public internet
    reaches ("a private address"); None when it is public. Text that is no address is not
    public either."""
    parsed = _parse(str(address))
    if parsed is None:
        return "not an address"
    return _why(*parsed)


def is_public(address: object) -> bool:
    return not_public(address) is None


def names_this_machine(host: str) -> bool:
    """Whether `host` (a name or an address, `[::1]` too) names this machine."""
    if host.strip().lower().rstrip(".") == "localhost":
        return True
    parsed = _parse(host)
    return parsed is not None and _why(*parsed) == "a loopback address"


def _why(version: int, value: int) -> str | None:
    for carried in _carried(version, value):
        why = _why(4, carried)
        if why is not None:
            return why
    for block, why in _BLOCKS:
        if _within(version, value, block):
            return why
    translated = _within(version, value, _MAPPED) or _within(version, value, _NAT64)
    if version == 6 and not translated and not _within(version, value, _GLOBAL_UNICAST):
        return "a reserved address"  # IPv4-compatible (deprecated), and unallocated space
    return None


def _carried(version: int, value: int) -> Iterator[int]:
    """The IPv4 addresses an IPv6 address carries: what it reaches is judged by them."""
    if version != 6:
        return
    translated = _within(6, value, _MAPPED) or _within(6, value, _NAT64)
    if translated or (_within(6, value, _COMPATIBLE) and value > 1):
        yield value & _V4_MASK
    elif _within(6, value, _SIX_TO_FOUR):
        yield (value >> 80) & _V4_MASK
    elif _within(6, value, _TEREDO):
        yield (value >> 64) & _V4_MASK  # the server
        yield ~value & _V4_MASK  # the client, obfuscated


def _within(version: int, value: int, block: tuple[int, int, int]) -> bool:
    block_version, prefix, below = block
    return version == block_version and value >> below == prefix
