"""A `session/prompt`'s content blocks as the prompt caretz sends.

Text stays as written. A file the editor mentions (a resource link) or attaches (an
embedded resource) becomes `@path` where it stands, and its text follows the prompt in a
`<file>` block: the embedded text as the editor sent it, or, for a link, the editor's
buffer (unsaved changes included) when the editor lets caretz read files; without that
the model reads the file itself. Images and audio are not read (the agent does not
advertise them); a placeholder says one was left out.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from acp.schema import (
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

FILE_CHARS = 100_000  # of one attached file's text in the prompt
ReadBuffer = Callable[[str], Awaitable["str | None"]]  # an absolute path → the editor's text


@dataclass(frozen=True)
class AttachedFile:
    shown: str  # the path as the prompt names it
    text: str


async def prompt_text(
    blocks: Sequence[Any], workspace: Path, read_buffer: ReadBuffer | None = None
) -> str:
    """The prompt for `blocks`; `read_buffer` reads an open file through the editor."""
    words: list[str] = []
    attached: list[AttachedFile] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            words.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            shown, path = where(block.uri, workspace)
            words.append(f"@{shown}")
            text = await read_buffer(path) if read_buffer is not None and path else None
            if text is not None:
                attached.append(AttachedFile(shown, text))
        elif isinstance(block, EmbeddedResourceContentBlock):
            words.append(embedded(block, workspace, attached))
        else:
            words.append(
                f"[a {getattr(block, 'type', 'content')} block was left out: caretz reads text only]"
            )
    text = joined(words)
    if attached:
        files = "\n\n".join(file_block(item) for item in attached)
        text += f"\n\nFiles the editor attached, as they are open in it:\n\n{files}"
    return text


def embedded(
    block: EmbeddedResourceContentBlock, workspace: Path, attached: list[AttachedFile]
) -> str:
    resource = block.resource
    shown, _ = where(resource.uri, workspace)
    if isinstance(resource, TextResourceContents):
        attached.append(AttachedFile(shown, resource.text))
        return f"@{shown}"
    if isinstance(resource, BlobResourceContents):
        return f"@{shown} (binary, not included)"
    return f"@{shown}"


def where(uri: str, workspace: Path) -> tuple[str, str]:
    """How the prompt names `uri` (relative inside the workspace), and its absolute path
    ("" when it is no local file)."""
    parsed = urlparse(uri)
    if parsed.scheme not in ("", "file"):
        return uri, ""
    path = os.path.normpath(os.path.join(workspace, unquote(parsed.path)))
    relative = os.path.relpath(path, workspace)
    return (path if relative.startswith("..") else relative), path


def joined(words: list[str]) -> str:
    """The pieces in order, with a space between two that would otherwise touch."""
    text = ""
    for word in words:
        if text and word and not text[-1].isspace() and not word[0].isspace():
            text += " "
        text += word
    return text


def file_block(item: AttachedFile) -> str:
    text = item.text
    if len(text) > FILE_CHARS:
        left = len(text) - FILE_CHARS
        text = text[:FILE_CHARS] + f"\n[… {left} more characters: read the file for the rest]"
    return f'<file path="{item.shown}">\n{text.rstrip(chr(10))}\n</file>'
