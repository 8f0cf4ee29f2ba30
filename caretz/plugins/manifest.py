"""A plugin's layout, as Claude Code writes it, read through the door.

A plugin is a folder: `.claude-plugin/plugin.json` (its `name`, `version`, `description`,
`author`, and paths that add to the default places: `commands`, `agents`, `skills`,
`hooks`, `mcpServers`), `commands/*.md`, `agents/*.md`, `skills/<name>/SKILL.md`,
`hooks/hooks.json` and `.mcp.json`. `${CLAUDE_PLUGIN_ROOT}` in its hooks and servers is
the folder it is installed in. Every file is read with `read_beneath` below the plugin's
own folder: a symlink, a FIFO or a file over the limit is refused, naming the file.
A file caretz cannot read is a `PluginError`: one line naming the file and what to fix.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from caretz.sandbox.door import read_beneath

MANIFEST = ".claude-plugin/plugin.json"
MAX_JSON_BYTES = 1 << 20
NAME_RULE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")  # Claude Code's kebab-case
ROOT_VARIABLE = "${CLAUDE_PLUGIN_ROOT}"
DEFAULT_HOOKS = "hooks/hooks.json"
DEFAULT_SERVERS = ".mcp.json"


class PluginError(Exception):
    """A plugin caretz cannot install or use, in one line naming the file."""


@dataclass(frozen=True, kw_only=True)
class Manifest:
    name: str
    version: str = ""
    description: str = ""
    author: str = ""
    commands: tuple[str, ...] = ("commands",)  # folders below the plugin's root
    agents: tuple[str, ...] = ("agents",)
    skills: tuple[str, ...] = ("skills",)
    hooks: tuple[Any, ...] = (DEFAULT_HOOKS,)  # a path, or the hooks object written inline
    servers: tuple[Any, ...] = (DEFAULT_SERVERS,)  # a path, or the servers written inline


def read_json(root: Path, relative: str) -> Any:
    """The JSON of `root/relative`, read below `root`; FileNotFoundError when it is not
    there, PluginError naming the file for one caretz cannot read."""
    path = root / relative
    try:
        raw = read_beneath(root, relative, MAX_JSON_BYTES)
    except FileNotFoundError:
        raise
    except OSError as error:  # the door's Refused among them
        raise PluginError(f"{path}: cannot read the file: {error.strerror or error}") from None
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise PluginError(f"{path}: not valid JSON ({error}); fix or remove the file") from None


def read_manifest(root: Path) -> Manifest:
    """The plugin at `root`: its `plugin.json` (a plugin without one is named after its
    folder, its parts in the default places)."""
    try:
        data = read_json(root, MANIFEST)
    except FileNotFoundError:
        return Manifest(name=checked_name(root.name, root / MANIFEST))
    where = root / MANIFEST
    if not isinstance(data, dict):
        raise PluginError(f"{where}: the file must hold a JSON object")
    name = checked_name(data.get("name"), where)
    author = data.get("author")
    return Manifest(
        name=name,
        version=_text(data, "version", where),
        description=_text(data, "description", where),
        author=str(author.get("name", "")) if isinstance(author, dict) else str(author or ""),
        commands=("commands", *_paths(data, "commands", where)),
        agents=("agents", *_paths(data, "agents", where)),
        skills=("skills", *_paths(data, "skills", where)),
        hooks=(DEFAULT_HOOKS, *_inline_or_paths(data, "hooks", where)),
        servers=(DEFAULT_SERVERS, *_inline_or_paths(data, "mcpServers", where)),
    )


def checked_name(name: Any, where: Path) -> str:
    if not isinstance(name, str) or not NAME_RULE.match(name):
        raise PluginError(
            f"{where}: name {name!r} is no plugin name (lower-case letters, digits and "
            "single hyphens, as Claude Code's kebab-case)"
        )
    return name


def below(relative: str, where: Path, key: str) -> str:
    """A path a manifest gives (`./scripts`), as a path below the plugin's root."""
    path = PurePosixPath(relative)
    if path.is_absolute() or ".." in path.parts or not path.parts:
        raise PluginError(f"{where}: {key}: {relative!r} must be a path inside the plugin (./…)")
    return path.as_posix()


def _text(data: dict[str, Any], key: str, where: Path) -> str:
    value = data.get(key, "")
    if not isinstance(value, str):
        raise PluginError(f"{where}: {key} must be a string")
    return value


def _paths(data: dict[str, Any], key: str, where: Path) -> list[str]:
    value = data.get(key)
    if value is None:
        return []
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise PluginError(f"{where}: {key} must be a path or a list of paths")
    return [below(v, where, key) for v in values]


def _inline_or_paths(data: dict[str, Any], key: str, where: Path) -> list[Any]:
    value = data.get(key)
    if isinstance(value, dict):
        return [value]
    return _paths(data, key, where)


def with_root(data: Any, root: Path) -> Any:
    """`data` with `${CLAUDE_PLUGIN_ROOT}` in each string made the plugin's folder."""
    if isinstance(data, str):
        return data.replace(ROOT_VARIABLE, str(root))
    if isinstance(data, list):
        return [with_root(item, root) for item in data]
    if isinstance(data, dict):
        return {key: with_root(value, root) for key, value in data.items()}
    return data
