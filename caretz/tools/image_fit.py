"""An image made to fit what every provider takes, or one line saying why it cannot.

The caps are Anthropic's, the tighter of the two vendors': at most 5 MB of base64 per
image (3.75 MB of bytes), and a long side of at most 1,568 pixels (larger images are
scaled down on Anthropic's side anyway, and a request of many images refuses any side
over 2,000). OpenAI scales an image to fit 2,048 × 2,048 and then its short side to 768,
so 1,568 costs nothing there. An image within both caps is sent byte for byte as it
is; a larger one is scaled down with Pillow (PNG kept for PNG, GIF and images with
transparency, JPEG otherwise or when a PNG stays too large), and only its first frame
is kept.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from caretz.messages import Image
from caretz.tools.image_format import NAMES, ImageHeader, read_header

if TYPE_CHECKING:
    from PIL.Image import Image as PilImage

MAX_SIDE = 1568
MAX_BYTES = 5 * 1024 * 1024 * 3 // 4  # 5 MB of base64
MAX_FILE_BYTES = 64 << 20  # a bigger file is not read at all
MAX_PIXELS = 50_000_000  # a bigger image is not decoded (a decompression bomb, or a poster)
JPEG_QUALITY = 85
SHRINK_STEP = 0.75  # each further try when the encoded image is still over MAX_BYTES
SHRINK_TRIES = 6


class ImageProblem(Exception):
    """An image that cannot be sent; str() is one line naming why."""


@dataclass(frozen=True)
class Fitted:
    image: Image  # what is sent
    original: ImageHeader  # what it was before any resizing
    original_bytes: int
    resized: bool

    def describe(self) -> str:
        """ "PNG, 800×600, 41 KB", or "PNG, 4000×3000, 9.1 MB, resized to JPEG 1568×1176,
        310 KB" when it was resized."""
        first, image = self.original, self.image
        shown = f"{first.name}, {first.width}×{first.height}, {human_size(self.original_bytes)}"
        if not self.resized:
            return shown
        kind = NAMES[image.media_type]
        size = human_size(len(image.data))
        return f"{shown}, resized to {kind} {image.width}×{image.height}, {size}"


def fit_image(data: bytes, source: str) -> Fitted:
    """`data` as an image within the caps (see the module's doc); raises ImageProblem."""
    header = read_header(data)
    if header is None:
        raise ImageProblem("not a PNG, JPEG, GIF or WebP image (or its header is broken)")
    if max(header.width, header.height) <= MAX_SIDE and len(data) <= MAX_BYTES:
        image = Image(
            media_type=header.media_type,
            data=data,
            width=header.width,
            height=header.height,
            source=source,
        )
        return Fitted(image, header, len(data), resized=False)
    if header.width * header.height > MAX_PIXELS:
        raise ImageProblem(
            f"{header.width}×{header.height} is more pixels than caretz resizes "
            f"({MAX_PIXELS // 1_000_000} million); make a smaller copy first"
        )
    return Fitted(_resized(data, header, source), header, len(data), resized=True)


def _pillow() -> ModuleType:
    """Pillow's Image module, imported at the first resize: most images fit as they are,
    and it costs ~15 ms."""
    # Not a lazy_module declaration: PIL.Image in quotes reads as an event type's name to
    # the check (tests/test_architecture.py) that only the records spell those.
    from PIL import Image as pil_image  # Pillow: at the first resize only (~15 ms)

    return pil_image


def _resized(data: bytes, header: ImageHeader, source: str) -> Image:
    pil_image = _pillow()
    try:
        with pil_image.open(io.BytesIO(data)) as opened:
            opened.seek(0)  # an animation's first frame
            transparent = opened.mode in ("RGBA", "LA", "PA") or "transparency" in opened.info
            picture = opened.convert("RGBA" if transparent else "RGB")
    except (
        pil_image.UnidentifiedImageError,
        pil_image.DecompressionBombError,
        OSError,
        ValueError,
    ) as error:
        raise ImageProblem(f"the {header.name} image cannot be decoded: {error}") from None
    as_png = transparent or header.media_type in ("image/png", "image/gif")
    scale = min(1.0, MAX_SIDE / max(header.width, header.height))
    for _ in range(SHRINK_TRIES):
        size = (max(round(header.width * scale), 1), max(round(header.height * scale), 1))
        small = picture.resize(size, pil_image.Resampling.LANCZOS)
        for media_type in ("image/png", "image/jpeg") if as_png else ("image/jpeg",):
            encoded = _encode(small, media_type)
            if len(encoded) <= MAX_BYTES:
                return Image(
                    media_type=media_type,
                    data=encoded,
                    width=size[0],
                    height=size[1],
                    source=source,
                )
        scale *= SHRINK_STEP
    raise ImageProblem(f"still over {human_size(MAX_BYTES)} after resizing")


def _encode(picture: PilImage, media_type: str) -> bytes:
    out = io.BytesIO()
    options: dict[str, Any]
    if media_type == "image/png":
        options = {"format": "PNG", "optimize": True}
    else:
        picture = _flattened(picture)
        options = {"format": "JPEG", "quality": JPEG_QUALITY, "optimize": True}
    picture.save(out, **options)
    return out.getvalue()


def _flattened(picture: PilImage) -> PilImage:
    """JPEG has no transparency: a transparent picture goes on white."""
    if picture.mode != "RGBA":
        return picture
    white: PilImage = _pillow().new("RGB", picture.size, (255, 255, 255))
    white.paste(picture, mask=picture.getchannel("A"))
    return white


def human_size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.0f} KB"
    return f"{size / 1024 / 1024:.1f} MB"
