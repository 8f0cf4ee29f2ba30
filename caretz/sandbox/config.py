"""The `sandbox` section of a profile (docs/configuration.md, docs/security.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BeforeValidator, Field, model_validator

from caretz.config_section import Section
from caretz.lazy import lazy_module
from caretz.sandbox.policy import ModeName

if TYPE_CHECKING:
    from caretz.sandbox.allowlist import NetworkAllowlist

if TYPE_CHECKING:
    from caretz.sandbox import allowlist as sandbox_allowlist
else:
    # The allowlist's parser (~2 ms): only for a profile with a list of hosts or a pinned host.
    sandbox_allowlist = lazy_module("caretz.sandbox.allowlist")

NETWORK_CHOICES = 'use "off", "on" or a list of hosts such as ["package-registries", "pypi.org"]'


def _network_setting(value: Any) -> Any:
    """false/true, "off"/"on", or a list of hosts (sandbox/allowlist.py) checked here, so
    that a bad entry is one line naming it."""
    if isinstance(value, bool) or value in ("off", "on"):
        return value
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(NETWORK_CHOICES)
    sandbox_allowlist.build_allowlist(value)  # raises AllowlistError, a ValueError naming the entry
    return value


NetworkSetting = Annotated[bool | str | list[str], BeforeValidator(_network_setting)]


class SandboxConfig(Section):
    mode: ModeName = "workspace-write"
    # "off" (false), "on" (true: the host's network) or the hosts commands may reach
    # through caretz's proxy.
    network: NetworkSetting = False
    # A name pinned to an address, private ones included (an internal index); used once
    # the list names it or the user allows it for the session.
    hosts: dict[str, str] = Field(default_factory=dict)
    add_dirs: list[str] = Field(default_factory=list)  # more writable roots (`~/` and relative ok)
    hidden: list[str] = Field(default_factory=list)  # added to the built-in hidden list; globs
    read_only: list[str] = Field(default_factory=list)  # read-only inside the roots; globs
    # Unix sockets commands may reach with the network off (bubblewrap binds each in).
    allow_unix_sockets: list[str] = Field(default_factory=list)
    allow_ssh_agent: bool = False  # pass SSH_AUTH_SOCK and let commands reach the agent

    @model_validator(mode="after")
    def _pins_are_addresses(self) -> SandboxConfig:
        if self.hosts:  # a pin that is not a name and an address is an error, whatever network is
            sandbox_allowlist.build_allowlist([], self.hosts)
        return self

    @property
    def host_network(self) -> bool:
        """Whether commands share the host's network ("on" or true)."""
        return self.network is True or self.network == "on"

    def allowlist(self) -> NetworkAllowlist | None:
        """The hosts commands may reach through the proxy; None unless `network` is a list."""
        if not isinstance(self.network, list):
            return None
        return sandbox_allowlist.build_allowlist(self.network, self.hosts)
