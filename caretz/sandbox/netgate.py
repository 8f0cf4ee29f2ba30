"""The proxy's checks: may a command reach this host and port, and at which addresses.

A host passes when the session's allowlist names it (sandbox/allowlist.py) or the user
allowed it for the session at the prompt. A name is then resolved, and refused if any
address it resolves to is not a public one (caretz/addresses.py decides, for web_fetch
too: loopback, private, link-local, shared, reserved, multicast, and the IPv6 forms that
carry one of those): a listed name must not become a way into the machine or its
network because someone controls its DNS. The proxy connects to the addresses checked
here, never resolving again. Two ways past that check, both written by the user: a name
pinned to an address (`sandbox.hosts`), and an address listed as such.

Every refusal is kept until the command that was running ends: the bash tool takes them
(`settle`), in the turn's thread, and each becomes a `Sandbox.NetworkRefused` event and a
line in the command's output the model reads. In an interactive session the user is then
asked whether to allow the refused hosts for the rest of the session (`ask`).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from caretz.addresses import is_public
from caretz.sandbox.allowlist import (
    AllowlistError,
    NetworkAllowlist,
    ip_literal,
    normalize_host,
)
from caretz.session.records.session import SandboxNetworkAllowed, SandboxNetworkRefused

# (host, port) → the addresses it resolves to, in the resolver's order.
Resolver = Callable[[str, int], Sequence[str]]
# Refused hosts in, the ones the user allowed for the session out.
AskToAllow = Callable[[Sequence[str]], Sequence[str]]
WHERE_TO_ALLOW = "sandbox.network in profiles.json"
NOT_LISTED = "not in the network allowlist"


@dataclass(frozen=True)
class Admitted:
    host: str
    port: int
    addresses: tuple[str, ...]  # checked; the proxy connects to these only


@dataclass(frozen=True)
class Refusal:
    host: str
    port: int
    reason: str

    def message(self) -> str:
        """One line: what was refused, why, and how to allow it (the 403's body)."""
        text = f"caretz refused a connection to {self.host}:{self.port}: {self.reason}"
        if self.reason == NOT_LISTED:
            text += f'. To allow it, add "{self.host}" to {WHERE_TO_ALLOW}'
        return text + "."

    def fields(self) -> dict[str, Any]:
        return {"host": self.host, "port": self.port, "reason": self.reason}


def system_resolve(host: str, port: int) -> list[str]:
    """The addresses `host` resolves to here, for TCP; raises OSError when none."""
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]).split("%")[0] for info in found))


class NetworkGate:
    """The session's allowlist checks, the hosts allowed at the prompt, and the refusals
    not yet told. Shared by the proxy's threads and the turn's thread."""

    def __init__(self, allowlist: NetworkAllowlist, resolve: Resolver | None = None):
        self.allowlist = allowlist  # the running sandbox's (a profile switch changes it)
        self.resolve: Resolver = resolve or system_resolve
        self.emit: Callable[..., object] = _ignore  # the session log's, once wired
        self.ask: AskToAllow | None = None  # None: nobody to ask (headless)
        self.problem: str | None = None  # why the proxy is not there (commands get no network)
        self._problem_told: str | None = None
        self._granted: set[str] = set()
        self._pending: list[Refusal] = []
        self._lock = threading.Lock()

    def admit(self, host: str, port: int) -> Admitted | Refusal:
        """Whether a command may reach `host:port`, and where to connect. Never raises."""
        try:
            name = normalize_host(host)
        except AllowlistError:
            shown = "".join(c if c.isprintable() else "?" for c in host[:100])
            return self._refuse(Refusal(shown, port, "not a host name"))
        if not 0 < port < 65536:
            return self._refuse(Refusal(name, port, "not a port"))
        with self._lock:
            listed = self.allowlist.allows(name) or name in self._granted
            pinned = self.allowlist.pinned_address(name)
        if not listed:
            return self._refuse(Refusal(name, port, NOT_LISTED))
        if pinned is not None:
            return Admitted(name, port, (pinned,))
        if ip_literal(name) is not None:
            return Admitted(name, port, (name,))  # the user named this address
        return self._resolved(name, port)

    def _resolved(self, name: str, port: int) -> Admitted | Refusal:
        try:
            addresses = tuple(self.resolve(name, port))
        except (OSError, UnicodeError):
            addresses = ()
        if not addresses:
            return self._refuse(Refusal(name, port, "its name does not resolve"))
        inside = [address for address in addresses if not is_public(address)]
        if inside:
            reason = (
                f"it resolves to {inside[0]}, which is not a public address (pin the "
                "name to it in sandbox.hosts if you mean it)"
            )
            return self._refuse(Refusal(name, port, reason))
        return Admitted(name, port, addresses)

    def _refuse(self, refusal: Refusal) -> Refusal:
        with self._lock:
            self._pending.append(refusal)
        return refusal

    def grant(self, host: str) -> None:
        """Allow `host` (a refused name, or a public address) for the rest of the session."""
        with self._lock:
            self._granted.add(normalize_host(host))

    def granted(self) -> list[str]:
        with self._lock:
            return sorted(self._granted)

    def take_refusals(self) -> list[Refusal]:
        """The refusals since the last call, each (host, port, reason) once."""
        with self._lock:
            pending, self._pending = self._pending, []
        return list(dict.fromkeys(pending))

    def settle(self, ask: bool = True) -> list[str]:
        """After a command: its refusals as events and as lines for the model, and, with
        someone to ask (and `ask`), the user's answer on allowing them for the session."""
        refusals = self.take_refusals()
        for refusal in refusals:
            self.emit(SandboxNetworkRefused(**refusal.fields()))
        lines = [f"[network] {refusal.message()}" for refusal in refusals]
        if self.problem and self.problem != self._problem_told:
            self._problem_told = self.problem
            lines.insert(0, f"[network] {self.problem}; commands have no network")
        offered = [host for host in _hosts(refusals) if _may_offer(host)]
        if not (ask and offered and self.ask is not None):
            return lines
        allowed = [host for host in self.ask(offered) if host in offered]
        for host in allowed:
            self.grant(host)
            self.emit(SandboxNetworkAllowed(host=host, scope="session"))
        if allowed:
            lines.append(
                f"[network] the user allowed {', '.join(allowed)} for this session: "
                "run the command again"
            )
        return lines


def _hosts(refusals: Sequence[Refusal]) -> list[str]:
    """The hosts refused for not being listed (a private address is not the user's to
    wave through at a prompt), each once."""
    return list(dict.fromkeys(r.host for r in refusals if r.reason == NOT_LISTED))


def _may_offer(host: str) -> bool:
    address = ip_literal(host)
    return address is None or is_public(address)


def _ignore(*_args: object, **_fields: object) -> None:
    return None
