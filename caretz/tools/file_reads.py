"""What an agent has read: the rule that a file is read before it is edited or replaced.

Each agent (the main one, each subagent) has its own `FileReads`, shared by its read,
write and edit tools: the resolved path of every file it read, with the file's identity
and a digest of its bytes at that moment, and the text itself when it is small enough to
show what changed. An edit or a write of an existing file is refused when the file was
never read, or when its bytes are no longer the ones read (a command, the user or
another program changed it since): the model is shown what changed, as a short diff,
and reads it again. caretz's own edits and writes count as reads of what they wrote.
"""

from __future__ import annotations

import difflib
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from caretz.lazy import lazy_module
from caretz.lazy_dataclass import lazy_dataclass
from caretz.tools import file_text

if TYPE_CHECKING:
    import hashlib
else:
    # OpenSSL's digests: loaded at the first file read, not at start.
    hashlib = lazy_module("hashlib")

# Texts kept to show what changed; a larger file keeps only its digest.
KEEP_TEXT_BYTES = 1 << 20
DIFF_LINES_SHOWN = 40


@lazy_dataclass(frozen=True)
class ReadRecord:
    digest: str
    text: str | None  # None: too large to keep


class FileReads:
    def __init__(self) -> None:
        self._records: dict[Path, ReadRecord] = {}
        self._lock = threading.Lock()  # read-only calls run in parallel

    def remember(self, real: Path, data: bytes) -> None:
        text = _text(data) if len(data) <= KEEP_TEXT_BYTES else None
        with self._lock:
            self._records[real] = ReadRecord(digest_of(data), text)

    def remember_digest(self, real: Path, digest: str) -> None:
        """A file read in pieces (a large one): its digest only."""
        with self._lock:
            self._records[real] = ReadRecord(digest, None)

    def refusal(self, real: Path, shown: str, data: bytes, verb: str) -> str | None:
        """Why `verb` (edit, write) may not change the file now holding `data`, or None."""
        with self._lock:
            record = self._records.get(real)
        if record is None:
            return (
                f"Not changed: {shown} exists and has not been read yet; read it first "
                f"(the {verb} must start from what the file holds now)"
            )
        if record.digest == digest_of(data):
            return None
        return (
            f"Not changed: {shown} changed on disk since you last read it (a command, the "
            f"user or another program wrote it); read it again, then {verb} it."
            + _what_changed(record.text, data, shown)
        )


def _text(data: bytes) -> str | None:
    """A file's text as the model reads it (None: binary)."""
    try:
        return file_text.shown(file_text.decode(data)[0])
    except file_text.NotText:
        return None


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _what_changed(before: str | None, data: bytes, shown: str) -> str:
    if before is None:
        return ""
    after = _text(data)
    if after is None:
        return ""
    lines = list(
        difflib.unified_diff(
            before.splitlines(),
            after.splitlines(),
            f"{shown} (as read)",
            f"{shown} (now)",
            lineterm="",
        )
    )
    if not lines:
        return ""
    shown_lines = lines[:DIFF_LINES_SHOWN]
    if len(lines) > DIFF_LINES_SHOWN:
        shown_lines.append(f"[… {len(lines) - DIFF_LINES_SHOWN} more diff lines]")
    return "\nWhat changed:\n" + "\n".join(shown_lines)
