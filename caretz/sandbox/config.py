"""The `sandbox` section of a profile (docs/configuration.md, docs/security.md)."""

from __future__ import annotations

from pydantic import Field

from caretz.config_section import Section
from caretz.sandbox.policy import ModeName


class SandboxConfig(Section):
    mode: ModeName = "workspace-write"
    network: bool = False  # True: commands share the host's network
    add_dirs: list[str] = Field(default_factory=list)  # more writable roots (`~/` and relative ok)
    hidden: list[str] = Field(default_factory=list)  # added to the built-in hidden list; globs
    read_only: list[str] = Field(default_factory=list)  # read-only inside the roots; globs
    # Unix sockets commands may reach with the network off (bubblewrap binds each in).
    allow_unix_sockets: list[str] = Field(default_factory=list)
    allow_ssh_agent: bool = False  # pass SSH_AUTH_SOCK and let commands reach the agent
