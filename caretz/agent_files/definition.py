"""One agent file: its front matter read leniently, its body the agent's instructions.

Keys (Claude Code's, which opencode and GitHub Copilot share in the main): `name`,
`description`, `tools` / `disallowedTools` (a comma list or a YAML list), `model`,
`permissionMode`, `skills`, `isolation`. Others (`color`, `hooks`, `mcpServers`, …)
are kept out: nothing an agent file says may widen what a session does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from caretz.slash_commands.markdown import split_front_matter, split_list

NAME = re.compile(r"^[a-z0-9][a-z0-9_.:-]{0,63}$")
ISOLATIONS = ("worktree",)


class AgentFileError(ValueError):
    """An agent file caretz cannot use; str() is one line naming the file and the key."""


@dataclass(frozen=True, kw_only=True)
class AgentDefinition:
    name: str
    description: str
    prompt: str  # the body: the agent's own instructions
    path: Path
    scope: str  # "project" or "user"
    tools: tuple[str, ...] | None = None  # None: every tool the session has
    disallowed_tools: tuple[str, ...] = ()
    model: str | None = None  # None or "inherit": the session's
    permission_mode: str | None = None  # as written (Claude Code's or caretz's words)
    skills: tuple[str, ...] = ()
    isolation: str | None = None  # "worktree": a worktree of its own


def parse_agent(text: str, path: Path, scope: str, default_name: str) -> AgentDefinition:
    """The agent `text` (read from `path`) defines; raises AgentFileError."""
    meta, body = _front_matter(text)
    if not meta:
        raise AgentFileError(f"{path}: no front matter (a `---` block with name and description)")
    name = _text(meta.get("name")) or default_name
    if not NAME.match(name.lower()):
        raise AgentFileError(f"{path}: name {name!r} is not a name (letters, digits, - _ . :)")
    description = _text(meta.get("description"))
    if not description:
        raise AgentFileError(f"{path}: description is missing (it says when to use the agent)")
    isolation = _text(meta.get("isolation")) or None
    if isolation is not None and isolation not in ISOLATIONS:
        raise AgentFileError(f"{path}: isolation {isolation!r}: the one choice is worktree")
    model = _text(meta.get("model")) or None
    tools, refused = _tools(meta, path)
    return AgentDefinition(
        name=name.lower(),
        description=description,
        prompt=body.strip(),
        path=path,
        scope=scope,
        tools=tools,
        disallowed_tools=(*(_tool_list(meta, "disallowedtools", path) or ()), *refused),
        model=None if model == "inherit" else model,
        permission_mode=_text(meta.get("permissionmode")) or None,
        skills=_tool_list(meta, "skills", path) or (),
        isolation=isolation,
    )


def _front_matter(text: str) -> tuple[dict[str, Any], str]:
    """(keys in lower case, body). YAML first; a block YAML refuses (an unquoted `: ` in a
    description, as hand-written files have) is read line by line instead."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, text
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), None)
    if end is None:
        return {}, text
    body = "\n".join(lines[end + 1 :])
    import yaml  # only for a file that has front matter (pyyaml, a dependency)

    try:
        # libyaml's loader where the wheel has it: ~10x faster than the pure Python one.
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        data = yaml.load("\n".join(lines[1:end]), Loader=loader)  # noqa: S506 (a safe loader)
    except yaml.YAMLError:
        data = None
    if not isinstance(data, Mapping):
        data = split_front_matter(text)[0]
    return {str(key).lower(): value for key, value in data.items()}, body


def _text(value: Any) -> str:
    if value is None or isinstance(value, Mapping):
        return ""
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    return " ".join(str(value).split())


def _tools(meta: Mapping[str, Any], path: Path) -> tuple[tuple[str, ...] | None, tuple[str, ...]]:
    """(the tools allowed, None: all; those an opencode file turns off: `tools: {write: false}`)."""
    value = meta.get("tools")
    if isinstance(value, Mapping):
        return None, tuple(str(name) for name, on in value.items() if on is False)
    return _tool_list(meta, "tools", path), ()


def _tool_list(meta: Mapping[str, Any], key: str, path: Path) -> tuple[str, ...] | None:
    value = meta.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        return tuple(split_list(value))
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(item.strip() for item in value if item.strip())
    raise AgentFileError(f"{path}: {key} must be a comma list or a list of names")
