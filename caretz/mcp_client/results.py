"""An MCP tool result as the text the model reads.

Text blocks are kept as they are; structured content becomes JSON text (unless a text
block already carries the same JSON, as the spec asks servers to do); images, audio and
other binary blobs become a short placeholder, since neither wire protocol takes them
in a tool result here. A result over the size cap is a failed result that says so and
shows its start, so the model asks for less instead of flooding its context.

The SDK's result objects are read by their attributes only, so this module does not
import the SDK.
"""

from __future__ import annotations

import json
from typing import Any

from caretz.text import shorten

EXCERPT_CHARS = 2000


def result_text(content: list[Any], structured: Any) -> str:
    """The blocks of a `CallToolResult` (its `content` and `structured_content`) as text."""
    parts = [block_text(block) for block in content]
    if structured is not None and not _carried(structured, parts):
        parts.append(json.dumps(structured, ensure_ascii=False, indent=2, default=str))
    text = "\n".join(part for part in parts if part)
    return text or "(no output)"


def block_text(block: Any) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        return f"[{kind}: {block.mime_type}, {_size(block.data)}; not shown]"
    if kind == "resource_link":
        return f"[resource link: {block.name} {block.uri}]"
    if kind == "resource":
        return _resource_text(block.resource)
    return f"[{kind or 'unknown'} content; not shown]"


def _resource_text(resource: Any) -> str:
    text = getattr(resource, "text", None)
    if isinstance(text, str):
        return f"[resource {resource.uri}]\n{text}"
    mime = getattr(resource, "mime_type", None) or "binary"
    return f"[resource {resource.uri}: {mime}, {_size(getattr(resource, 'blob', ''))}; not shown]"


def _size(base64_data: str) -> str:
    size = len(base64_data) * 3 // 4
    if size < 1024:
        return f"{size} bytes"
    return f"{size / 1024:.1f} KB" if size < 1024 * 1024 else f"{size / 1024 / 1024:.1f} MB"


def _carried(structured: Any, parts: list[str]) -> bool:
    """Whether a text block already says what the structured content does: as its JSON,
    or as the one value a server wrapped as `{"result": …}` (a tool that returns a string)."""
    wrapped = (
        structured.get("result") if isinstance(structured, dict) and len(structured) == 1 else None
    )
    for part in parts:
        if wrapped is not None and part == str(wrapped):
            return True
        try:
            if json.loads(part) in (structured, wrapped):
                return True
        except ValueError:
            continue
    return False


def over_cap(tool: str, text: str, cap: int) -> str:
    """The failed result for a result of more than `cap` characters."""
    return (
        f"{tool} returned {len(text):,} characters, more than caretz passes on "
        f"(mcp.maxResultChars: {cap:,}); the result was dropped. Ask for less (a narrower "
        f"query, a page, a limit). It began:\n{shorten(text, EXCERPT_CHARS)}"
    )
