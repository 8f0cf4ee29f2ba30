"""The MCP servers a session is configured with: the profile's `mcpServers` and the
project's `.mcp.json` (the file Claude Code and Cursor read), at the project root.

A `.mcp.json` caretz cannot read (not JSON, a wrong type, an entry with neither a
command nor a url) is a ConfigError naming the file and the key: one line, exit 2. It is
read through the door (sandbox/door.py, `read_beneath`): a symlink along it, a FIFO, a
hard link or a file over MAX_FILE_BYTES is such an error too, naming why.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, ConfigDict, Field, ValidationError

from caretz.config.errors import describe_validation_error
from caretz.config.loading import parse_json, unreadable
from caretz.config.settings import Settings
from caretz.config_base import ConfigError
from caretz.config_section import Section
from caretz.mcp_client.config import McpOAuth, McpServerEntry, named
from caretz.mcp_client.plan import Configured
from caretz.sandbox.door import read_beneath

PROJECT_FILE = ".mcp.json"
MAX_FILE_BYTES = 1 << 20


class ProjectOAuth(McpOAuth):
    """An entry's `oauth` in a `.mcp.json`: other tools' keys in it are left alone too."""

    model_config = ConfigDict(extra="ignore")


class ProjectServerEntry(McpServerEntry):
    """An entry of a project's `.mcp.json`: the file is shared with other tools, which
    add keys of their own, so keys caretz does not know are left alone."""

    model_config = ConfigDict(extra="ignore")

    oauth: ProjectOAuth | None = None


class ProjectServersFile(Section):
    """A project's `.mcp.json`."""

    model_config = ConfigDict(extra="ignore")

    mcp_servers: Annotated[dict[str, ProjectServerEntry], AfterValidator(named)] = Field(
        default_factory=dict
    )


def profile_servers(settings: Settings) -> list[Configured]:
    source = f"{settings.config_path.name} (profiles.{settings.profile_name}.mcpServers)"
    return [Configured(name, entry, source) for name, entry in settings.profile.mcp_servers.items()]


def project_servers(root: Path, cwd: Path | None = None) -> list[Configured]:
    """The servers of `root/.mcp.json` (none when there is no such file)."""
    path = root / PROJECT_FILE
    try:
        text = read_beneath(root, PROJECT_FILE, MAX_FILE_BYTES).decode("utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:  # the door's Refused among them
        raise ConfigError(f"{path}: cannot read the file: {unreadable(exc)}") from None
    data = parse_json(path, text)
    if data is None:
        return []
    return servers_of(data, path, _shown(path, cwd or root))


def servers_of(data: object, path: Path, source: str) -> list[Configured]:
    """The servers of a `.mcp.json`'s data read from `path` (a project's, or an installed
    plugin's), each needing approval; ConfigError naming the file and the key."""
    try:
        parsed = ProjectServersFile.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{path}: {describe_validation_error(ProjectServersFile, exc)}") from None
    return [
        Configured(name, entry, source, project=True) for name, entry in parsed.mcp_servers.items()
    ]


def _shown(path: Path, cwd: Path) -> str:
    relative = os.path.relpath(path, cwd)
    return relative if not relative.startswith("..") else os.fspath(path)
