"""Images attached to a prompt: each `--image PATH`, and each `@path` in the prompt that
names an image file (.png, .jpg, .jpeg, .gif, .webp).

They are read as the read tool reads files (tools/images.py): the sandbox's hidden paths
and /proc stay closed, and each image is fitted to the size caps. The prompt's text is
sent as typed, so `@shot.png` still tells the model which image is which. A file that is
missing, is no image or cannot be read, or a model caretz's table knows to be text-only,
is a ConfigError of one line, and nothing is sent.
"""

from __future__ import annotations

from collections.abc import Sequence

from caretz.config_base import ConfigError
from caretz.messages import Image
from caretz.sandbox.paths import PathRefused
from caretz.slash_commands.inline import file_mentions
from caretz.text import one_line
from caretz.tools.base import ToolContext
from caretz.tools.file_access import FileProblem
from caretz.tools.images import is_image_name, load_image

NOT_SENT = "(nothing was sent)"


def image_mentions(prompt: str) -> list[str]:
    """The paths of the prompt's `@` words that name image files, as written (a trailing
    full stop or bracket left out)."""
    found: list[str] = []
    for mention in file_mentions(prompt):
        named = next((c for c in reversed(mention.candidates) if is_image_name(c)), None)
        if named is not None:
            found.append(named)
    return list(dict.fromkeys(found))


def prompt_images(ctx: ToolContext, prompt: str, paths: Sequence[str] = ()) -> list[Image]:
    """The images `--image` (`paths`) and the prompt's `@` words attach; raises
    ConfigError naming the one that cannot be sent."""
    named = [(f"--image {path}", path) for path in paths]
    named += [(f"@{path}", path) for path in image_mentions(prompt)]
    if not named:
        return []
    if ctx.no_images is not None:
        listed = ", ".join(shown for shown, _ in named)
        raise ConfigError(f"{ctx.no_images}: {listed} cannot be sent {NOT_SENT}")
    images: dict[str, Image] = {}
    for shown, path in named:
        try:
            image = load_image(ctx, path).image
        except (FileProblem, PathRefused) as problem:
            reason = one_line(str(problem), 300).removeprefix("refused: ")
            raise ConfigError(f"cannot attach {shown}: {reason} {NOT_SENT}") from None
        images.setdefault(image.sha256, image)  # the same file named twice goes once
    return list(images.values())
