"""An MCP tool result as the text and images the model reads.

Text blocks are kept as they are; structured content becomes JSON text (unless a text
block already carries the same JSON, as the spec asks servers to do). An image (an image
block, or an embedded resource whose blob is one) goes to the model as an image, fitted
to the caps like a file the read tool reads (tools/image_fit.py), with a line naming it
in the text; one that cannot be sent (not PNG, JPEG, GIF or WebP, broken, too large),
audio and other binary blobs become a short placeholder. A result whose text is over the
size cap is a failed result that says so and shows its start, so the model asks for less
instead of flooding its context.

Everything a result holds passes caretz/inbound.py: its text becomes valid Unicode, and
structured content deeper than inbound.MAX_DEPTH, or with a number JSON cannot carry,
makes the result a failed one that says so (`BadInput`).

The SDK's result objects are read by their attributes only, so this module does not
import the SDK.
"""

from __future__ import annotations

import binascii
import json
from base64 import b64decode
from typing import Any

from caretz import inbound
from caretz.messages import Image
from caretz.text import shorten
from caretz.tools.image_fit import ImageProblem, fit_image

EXCERPT_CHARS = 2000


def result_content(content: list[Any], structured: Any, tool: str) -> tuple[str, list[Image]]:
    """The blocks of a `CallToolResult` (its `content` and `structured_content`) as text,
    and the images among them (from the tool `tool`); raises inbound.BadInput."""
    reader = _Blocks(tool)
    parts = [inbound.text(reader.text(block)) for block in content]
    if structured is not None:
        structured = inbound.checked(structured, "its structured content")
    if structured is not None and not _carried(structured, parts):
        parts.append(json.dumps(structured, ensure_ascii=False, indent=2, default=str))
    text = "\n".join(part for part in parts if part)
    return text or "(no output)", reader.images


def resource_content(contents: list[Any], label: str) -> tuple[str, list[Image]]:
    """A read resource's contents (text or blob, each with its uri) as text, and the
    images among them; raises inbound.BadInput."""
    reader = _Blocks(label)
    text = "\n".join(inbound.text(reader.resource(item)) for item in contents)
    return text or "(the resource is empty)", reader.images


def prompt_content(messages: list[Any], label: str) -> tuple[str, list[Image]]:
    """A prompt's messages (each a role and a content block) as one text, and the images
    among them; raises inbound.BadInput."""
    reader = _Blocks(label)
    parts = [inbound.text(reader.text(message.content)) for message in messages]
    return "\n\n".join(part for part in parts if part), reader.images


class _Blocks:
    """Reads one result's blocks, keeping the images it can send."""

    def __init__(self, tool: str):
        self.tool = tool
        self.images: list[Image] = []

    def text(self, block: Any) -> str:
        kind = getattr(block, "type", None)
        if kind == "text":
            return str(block.text)
        if kind == "image":
            return self.image(block.mime_type, block.data)
        if kind == "audio":
            return f"[audio: {block.mime_type}, {_size(block.data)}; not shown]"
        if kind == "resource_link":
            return f"[resource link: {block.name} {block.uri}]"
        if kind == "resource":
            return self.resource(block.resource)
        return f"[{kind or 'unknown'} content; not shown]"

    def image(self, mime: str, data: str, label: str = "image") -> str:
        try:
            fitted = fit_image(b64decode(data, validate=True), self.tool)
        except binascii.Error:
            return f"[{label}: {mime}, {_size(data)}; not shown: its base64 is broken]"
        except ImageProblem as problem:
            return f"[{label}: {mime}, {_size(data)}; not shown: {problem}]"
        self.images.append(fitted.image)
        return f"[{label}: {fitted.describe()}; attached]"

    def resource(self, resource: Any) -> str:
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return f"[resource {resource.uri}]\n{text}"
        mime = getattr(resource, "mime_type", None) or "binary"
        blob = getattr(resource, "blob", "")
        if mime.startswith("image/"):
            return self.image(mime, blob, f"resource {resource.uri}")
        return f"[resource {resource.uri}: {mime}, {_size(blob)}; not shown]"


def _size(base64_data: str) -> str:
    size = len(base64_data) * 3 // 4 - base64_data[-2:].count("=")  # padding is no data
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
            if inbound.load_json(part) in (structured, wrapped):
                return True
        except inbound.BadInput:
            continue
    return False


def over_cap(tool: str, text: str, cap: int) -> str:
    """The failed result for a result of more than `cap` characters."""
    return (
        f"{tool} returned {len(text):,} characters, more than caretz passes on "
        f"(mcp.maxResultChars: {cap:,}); the result was dropped. Ask for less (a narrower "
        f"query, a page, a limit). It began:\n{shorten(text, EXCERPT_CHARS)}"
    )
