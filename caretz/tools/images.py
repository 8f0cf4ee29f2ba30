"""Image files for the model: read through the file tools' path checks, fitted to the
caps (tools/image_fit.py), and a tool result that carries them.

The read tool returns an image file as an image; prompts attach them (`--image`,
`@shot.png`, caretz/runtime/attachments.py) the same way, so the sandbox's hidden paths
and /proc stay closed to both. A model caretz's table knows to be text-only
(`ToolContext.no_images`) gets a failed result naming the image instead of the image.
"""

from __future__ import annotations

import os

from caretz.sandbox import safe_open
from caretz.tools.base import ToolContext, ToolResult
from caretz.tools.file_access import FileProblem, display_path, open_file
from caretz.tools.image_fit import MAX_FILE_BYTES, Fitted, ImageProblem, fit_image, human_size
from caretz.tools.image_format import media_type

# The names `@path` in a prompt attaches as images (a typo'd path then fails loudly).
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")
SNIFF_BYTES = 16


def is_image_name(path: str) -> bool:
    return path.lower().endswith(IMAGE_SUFFIXES)


def starts_like_image(fd: int) -> bool:
    """Whether the open file's first bytes are a PNG, JPEG, GIF or WebP signature."""
    return media_type(os.pread(fd, SNIFF_BYTES, 0)) is not None


def fitted_from_fd(fd: int, size: int, shown: str) -> Fitted:
    """The image in the open file (the caller closes it), fitted; raises FileProblem."""
    if size > MAX_FILE_BYTES:
        raise FileProblem(
            f"{shown} is an image of {human_size(size)}, more than caretz reads "
            f"({human_size(MAX_FILE_BYTES)}); make a smaller copy first"
        )
    try:
        data = safe_open.read_all(fd, MAX_FILE_BYTES + 1)
    except OSError as error:
        raise FileProblem(f"Cannot read {shown}: {error.strerror or error}") from None
    try:
        return fit_image(data, shown)
    except ImageProblem as problem:
        raise FileProblem(f"{shown}: {problem}") from None


def load_image(ctx: ToolContext, raw: str) -> Fitted:
    """The image file `raw` names, checked and opened as the read tool opens files;
    raises FileProblem (no such file, not an image, too large) or PathRefused."""
    checked, fd, stat = open_file(ctx, raw)
    shown = display_path(ctx, checked.path)
    if fd is None or stat is None:
        raise FileProblem(f"there is no file {shown}")
    try:
        if not starts_like_image(fd):
            raise FileProblem(f"{shown} is not a PNG, JPEG, GIF or WebP image")
        return fitted_from_fd(fd, stat.st_size, shown)
    finally:
        os.close(fd)


def image_result(ctx: ToolContext, fitted: Fitted) -> ToolResult:
    """A read's result for an image file: one line describing it, and the image; or,
    for a model that takes no images, a failed result saying so."""
    image = fitted.image
    line = f"Image {image.source} ({fitted.describe()})"
    if ctx.no_images is not None:
        return ToolResult(ok=False, output=f"{line}: not shown: {ctx.no_images}")
    return ToolResult(ok=True, output=line, images=[image])
