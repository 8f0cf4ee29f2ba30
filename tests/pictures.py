"""Real image files for the tests: PNGs from a small pure-Python writer, the other
formats (and noise, and decoding) through Pillow."""

from __future__ import annotations

import base64
import io
import random
import struct
import zlib

from PIL import Image


def png(width: int, height: int, color: tuple[int, int, int] = (200, 40, 40)) -> bytes:
    """A plain RGB PNG of one colour, written by hand (no image library)."""
    row = b"\x00" + bytes(color) * width  # filter byte 0, then the pixels
    pixels = zlib.compress(row * height, 9)

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def encoded(image: Image.Image, kind: str, **options: object) -> bytes:
    out = io.BytesIO()
    image.save(out, format=kind, **options)
    return out.getvalue()


def picture(width: int, height: int, kind: str = "JPEG", mode: str = "RGB") -> bytes:
    """A gradient in `kind` (JPEG, PNG, GIF, WEBP), so it compresses like a photo."""
    across = Image.linear_gradient("L").transpose(Image.Transpose.ROTATE_90)
    gradient, other = (g.resize((width, height)) for g in (Image.linear_gradient("L"), across))
    image = Image.merge("RGB", (gradient, other, gradient))
    if mode == "RGBA":
        image.putalpha(gradient)
    return encoded(image, kind)


def noise(width: int, height: int, seed: int = 7) -> bytes:
    """A PNG of random pixels: megabytes for its size, as a photo saved as PNG is."""
    data = random.Random(seed).randbytes(width * height * 3)
    return encoded(Image.frombytes("RGB", (width, height), data), "PNG")


def decoded(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


def from_base64(text: str) -> bytes:
    return base64.b64decode(text, validate=True)


def from_data_url(url: str) -> tuple[str, bytes]:
    """A data: URL's media type and bytes."""
    head, _, data = url.partition(",")
    assert head.startswith("data:") and head.endswith(";base64"), head
    return head.removeprefix("data:").removesuffix(";base64"), from_base64(data)
