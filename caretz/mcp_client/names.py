"""The names MCP tools get: `mcp__<server>__<tool>`, in what both wire protocols accept.

Anthropic and OpenAI both take tool names of letters, digits, `_` and `-`, and OpenAI at
most 64 of them. Anything else becomes `_`; a server's name also loses runs of `_`, so
that the `__` after it always ends it and a rule such as `mcp__git__*` means one server.
A name cut to fit ends in a short hash of the whole, so two long names stay apart.
"""

from __future__ import annotations

import hashlib
import re

MAX_TOOL_NAME = 64
PREFIX = "mcp__"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_UNDERSCORES = re.compile(r"_{2,}")


def server_part(name: str) -> str:
    """A server's name as it appears in its tools' names: `my.server` → `my_server`."""
    part = _UNDERSCORES.sub("_", _UNSAFE.sub("_", name)).strip("_")
    return part or "server"


def tool_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>`, at most MAX_TOOL_NAME characters."""
    name = f"{PREFIX}{server_part(server)}__{_UNSAFE.sub('_', tool) or 'tool'}"
    if len(name) <= MAX_TOOL_NAME:
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[: MAX_TOOL_NAME - 9]}_{digest}"


def unique_tool_names(server: str, tools: list[str]) -> dict[str, str]:
    """Each of a server's tools → its caretz name; two tools that would meet get a hash."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for tool in tools:
        name = tool_name(server, tool)
        if name in taken:
            digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
            name = f"{name[: MAX_TOOL_NAME - 9]}_{digest}"
        taken.add(name)
        names[tool] = name
    return names
