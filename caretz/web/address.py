"""Where a fetch may connect: a host resolved once, every address it has checked, and the
checked address handed on to be connected to (so DNS cannot answer differently between
the check and the connection: no rebinding).

An address that is not a public one (caretz/addresses.py decides, for the network proxy
too: loopback, private, link-local, multicast, reserved, unspecified, shared, or one of
those carried inside an IPv6 address) is refused unless an allow rule names the host or
that address, so a page or a model cannot make caretz request the user's own machine or
network.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass

from caretz.addresses import not_public
from caretz.permissions.rules import domain_rule
from caretz.web.model import FetchRefused

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
# host, port, seconds → the addresses the host has (raises FetchRefused when it has none).
Resolver = Callable[[str, int, float], list[Address]]


def literal(host: str) -> Address | None:
    """The address a host written as an IP literal is (`[::1]`, without a zone); None for
    a name."""
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None


def system_resolver(host: str, port: int, timeout_s: float) -> list[Address]:
    """The host's addresses from the system's resolver, within `timeout_s`.

    getaddrinfo cannot be given a timeout, so it runs on a daemon thread that is left
    behind when it takes too long."""
    found: list[Address] = []
    problem: list[str] = []

    def lookup() -> None:
        try:
            answers = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as error:
            problem.append(str(error))
            return
        for *_, sockaddr in answers:
            address = literal(str(sockaddr[0]))  # fe80::1%eth0: the zone is not ours
            if address is not None and address not in found:
                found.append(address)

    thread = threading.Thread(target=lookup, name="caretz-resolve", daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        raise FetchRefused(f"{host} did not resolve within {timeout_s:g}s")
    if problem or not found:
        raise FetchRefused(f"{host} does not resolve: {problem[0] if problem else 'no address'}")
    return found


@dataclass(frozen=True)
class Vetted:
    """The addresses to connect to, in the resolver's order (each one checked), and
    whether an allow rule had to name one (not public)."""

    addresses: tuple[Address, ...]
    exempted: bool


def vet(
    host: str,
    port: int,
    *,
    named: Callable[[str], bool],
    resolver: Resolver = system_resolver,
    timeout_s: float = 10.0,
) -> Vetted:
    """The addresses to connect to for `host`; raises FetchRefused.

    Every address the host resolves to must be public, or named by a rule (`named(host)`
    or `named(address)`): one private answer among public ones refuses the whole host, so
    a DNS server cannot slip one past by answering twice."""
    fixed = literal(host)
    addresses = [fixed] if fixed is not None else resolver(host, port, timeout_s)
    exempted = False
    for address in addresses:
        why = not_public(address)
        if why is None:
            continue
        if not (named(host) or named(str(address))):
            shown = host if fixed is not None else f"{host} ({address})"
            raise FetchRefused(
                f"{shown} is {why}, and caretz fetches no such address unless an allow "
                f"rule names it: {domain_rule(host)}"
            )
        exempted = True
    return Vetted(tuple(addresses), exempted)
