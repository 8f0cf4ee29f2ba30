"""A session's images: each stored once, in a file named by its digest, beside the log.

The log's events hold only an image's `ref()` (media type, digest, size, where it came
from), so events.jsonl stays small however many screenshots a session reads; resuming
reads the bytes back from `images/<sha256>.<ext>` in the session's folder. A file whose
bytes no longer match its name (edited, truncated) is not read back.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from caretz import private_data
from caretz.lazy import lazy_module
from caretz.messages import Image

if TYPE_CHECKING:
    import hashlib
else:
    # OpenSSL's digests: only an image read back (on resume) is checked here.
    hashlib = lazy_module("hashlib")

FOLDER = "images"
SUFFIXES = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}


class ImageFiles:
    """The images of the session whose folder is `folder`."""

    def __init__(self, folder: Path):
        self.folder = folder / FOLDER

    def path(self, sha256: str, media_type: str) -> Path:
        return self.folder / f"{sha256}{SUFFIXES.get(media_type, '.bin')}"

    def save(self, image: Image) -> None:
        """Write the image's bytes unless a file of the same digest is there already."""
        target = self.path(image.sha256, image.media_type)
        if target.is_file():
            return
        private_data.write_file(target, image.data)  # aside, then renamed: never half a file

    def load(self, ref: dict[str, Any]) -> Image | None:
        """The image a ref names; None when its file is missing or does not match it."""
        sha256, media_type = str(ref.get("sha256") or ""), str(ref.get("media_type") or "")
        if len(sha256) != 64 or media_type not in SUFFIXES:
            return None
        try:
            data = self.path(sha256, media_type).read_bytes()
        except OSError:
            return None
        if hashlib.sha256(data).hexdigest() != sha256:
            return None
        return Image(
            media_type=media_type,
            data=data,
            width=int(ref.get("width") or 0),
            height=int(ref.get("height") or 0),
            source=str(ref.get("source") or ""),
        )
