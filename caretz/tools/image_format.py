"""Which image format some bytes are, and its width and height, from the header alone.

Only the four formats every protocol caretz speaks takes: PNG, JPEG, GIF and WebP.
Reading the header is enough to decide whether an image fits the caps as it is, so the
common case (a screenshot already small enough) never loads an image library.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# The JPEG markers that start a frame (SOF0–SOF15 but DHT, JPG and DAC), which hold its size.
_JPEG_FRAMES = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}
# Markers with no length after them: TEM, RST0–RST7, SOI, EOI.
_JPEG_BARE = {0x01, *range(0xD0, 0xD9)}
NAMES = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WebP"}


@dataclass(frozen=True)
class ImageHeader:
    media_type: str
    width: int
    height: int

    @property
    def name(self) -> str:
        return NAMES[self.media_type]


def media_type(data: bytes) -> str | None:
    """The image type the bytes start like, or None: not one of the four."""
    if data.startswith(PNG_SIGNATURE):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def read_header(data: bytes) -> ImageHeader | None:
    """The format and size of the image in `data`; None when it is not one of the four
    formats or its header is cut short or broken."""
    kind = media_type(data)
    try:
        if kind == "image/png":
            size = _png_size(data)
        elif kind == "image/jpeg":
            size = _jpeg_size(data)
        elif kind == "image/gif":
            size = struct.unpack("<HH", data[6:10])
        elif kind == "image/webp":
            size = _webp_size(data)
        else:
            return None
    except (struct.error, IndexError):
        return None
    if kind is None or size is None or min(size) < 1:
        return None
    return ImageHeader(kind, size[0], size[1])


def _png_size(data: bytes) -> tuple[int, int] | None:
    if data[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    position = 2
    while position + 4 <= len(data):
        if data[position] != 0xFF:
            return None
        marker = data[position + 1]
        if marker == 0xFF:  # fill bytes before a marker
            position += 1
            continue
        if marker in _JPEG_BARE:
            position += 2
            continue
        (length,) = struct.unpack(">H", data[position + 2 : position + 4])
        if marker in _JPEG_FRAMES:
            height, width = struct.unpack(">HH", data[position + 5 : position + 9])
            return width, height
        if marker == 0xDA or length < 2:  # the scan started without a frame header
            return None
        position += 2 + length
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8X":  # 24-bit canvas width and height, each less one
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    if chunk == b"VP8L" and data[20] == 0x2F:  # 14-bit width and height, each less one
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 " and data[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    return None
