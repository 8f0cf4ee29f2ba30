"""The network allowlist: which hosts a command may reach through caretz's proxy.

`sandbox.network` is "off", "on" (true and false still work) or a list of entries:

- a host name, matched exactly: `pypi.org`;
- `*.example.com`: every name below example.com (`a.example.com`, `a.b.example.com`),
  not example.com itself;
- an address, `10.1.2.3` or `::1`: that address, asked for by address (private ones
  too, because the user named them);
- a preset: `package-registries` (PRESETS below).

`sandbox.hosts` pins a name to an address (`{"index.corp": "10.1.2.3"}`): the proxy
connects there without asking DNS, private addresses included. That is how an internal
registry, or a test's loopback server, is reached by name. A pin opens nothing by itself:
it is used once the list names the host, or the user allows it for the session.

Plain data and pure functions (no sockets): the proxy's checks (sandbox/netgate.py)
read it, and the profile's schema (sandbox/config.py) validates with it.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

# The hosts package managers download from. Each downloads from the hosts named, with no
# redirect to another host by default (Maven Central's two names, RubyGems' index).
PRESETS: dict[str, tuple[str, ...]] = {
    "package-registries": (
        "pypi.org",  # pip, uv: the index
        "files.pythonhosted.org",  # pip, uv: the files
        "registry.npmjs.org",  # npm, pnpm
        "registry.yarnpkg.com",  # yarn
        "crates.io",  # cargo: the API
        "index.crates.io",  # cargo: the sparse index
        "static.crates.io",  # cargo: the crates
        "proxy.golang.org",  # go: modules
        "sum.golang.org",  # go: the checksum database
        "rubygems.org",  # gem, bundler
        "index.rubygems.org",  # bundler's compact index
        "repo.maven.apache.org",  # Maven Central
        "repo1.maven.org",  # Maven Central (older name)
    ),
}

_LABEL = r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?"
_NAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")


class AllowlistError(ValueError):
    """An entry that cannot be used; the message is one line naming it."""


@dataclass(frozen=True)
class NetworkAllowlist:
    """The hosts commands may reach through the proxy, as normalized entries."""

    names: frozenset[str] = frozenset()  # exact names and addresses
    suffixes: tuple[str, ...] = ()  # "example.com" for "*.example.com"
    pinned: tuple[tuple[str, str], ...] = ()  # (name, address) from `sandbox.hosts`
    entries: tuple[str, ...] = ()  # as written, for what is shown and told

    def allows(self, host: str) -> bool:
        """Whether `host` (normalized, see `normalize_host`) is on the list."""
        if host in self.names:
            return True
        return any(host.endswith("." + suffix) for suffix in self.suffixes)

    def pinned_address(self, host: str) -> str | None:
        return dict(self.pinned).get(host)

    def shown(self) -> str:
        """The entries as the user wrote them, presets named, for one line."""
        return ", ".join(self.entries) if self.entries else "no host"


def build_allowlist(
    entries: Iterable[str], pinned: Mapping[str, str] | None = None
) -> NetworkAllowlist:
    """The allowlist for `sandbox.network`'s list and `sandbox.hosts`; raises
    AllowlistError for an entry or a pin that cannot be used."""
    written = tuple(entries)
    names: set[str] = set()
    suffixes: list[str] = []
    for entry in written:
        for item in PRESETS.get(entry.strip().lower(), (entry,)):
            kind, value = parse_entry(item)
            if kind == "suffix":
                suffixes.append(value)
            else:
                names.add(value)
    pins = tuple(_pin(name, address) for name, address in (pinned or {}).items())
    return NetworkAllowlist(frozenset(names), tuple(dict.fromkeys(suffixes)), pins, written)


def parse_entry(entry: str) -> tuple[str, str]:
    """("name", host), ("address", ip) or ("suffix", domain) for one written entry."""
    text = entry.strip().lower().rstrip(".")
    if text == "*":
        raise AllowlistError(f'{entry!r}: for every host, set sandbox.network to "on"')
    if text.startswith("*."):
        domain = text[2:]
        if not _NAME.fullmatch(domain):
            raise AllowlistError(f'{entry!r}: a wildcard is "*." and a domain, as "*.example.com"')
        return "suffix", domain
    address = ip_literal(text)
    if address is not None:
        return "address", address
    if text in ("on", "off", "true", "false") or not _NAME.fullmatch(text):
        raise AllowlistError(
            f"{entry!r} is not a host name, an address, a wildcard such as "
            f'"*.example.com" or a preset ({", ".join(PRESETS)})'
        )
    return "name", text


def normalize_host(host: str) -> str:
    """A requested host as the list compares it: lower case, no trailing dot, an address
    in its short form. Raises AllowlistError when it is neither a name nor an address."""
    text = host.strip().lower().rstrip(".")
    address = ip_literal(text)
    if address is not None:
        return address
    if not _NAME.fullmatch(text):
        raise AllowlistError(f"{host!r} is not a host name")
    return text


def ip_literal(text: str) -> str | None:
    """`text` as an address in its short form (`[::1]` → `::1`); None when it is not one."""
    bare = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    try:
        return str(ipaddress.ip_address(bare))
    except ValueError:
        return None


def _pin(name: str, address: str) -> tuple[str, str]:
    try:
        host = normalize_host(name)
    except AllowlistError as error:
        raise AllowlistError(f"sandbox.hosts: {error}") from None
    pinned = ip_literal(address.strip())
    if pinned is None:
        raise AllowlistError(f"sandbox.hosts: {name!r} maps to {address!r}, which is no address")
    return host, pinned
