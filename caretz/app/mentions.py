"""`@path` in a message typed in an interactive session: completion from the project's
files and folders, and what a mention attaches when the message is sent.

Completion offers what glob would list (caretz/tools/file_list.py: ignore rules kept,
hidden files and the sandbox's hidden paths never there), the files and the folders
that hold them, listed once per prompt. On sending, each `@word` that names a text file
attaches its contents (the first FILE_MAX_BYTES, with its path) and each that names a
folder attaches its entries (names, the first FOLDER_MAX_NAMES). A mention goes through
the checks the read tool's path goes through (caretz/tools/file_access.py: the sandbox's
roots and hidden paths, opened without following a symlink), and the user's Read deny
rules: a refused path is one line and is never read. A word that names nothing stays
text (an address, `@decorator`). Images (`@shot.png`) are left to the images change.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from caretz.sandbox import safe_open
from caretz.sandbox.paths import PathRefused
from caretz.slash_commands.inline import file_mentions
from caretz.text import one_line
from caretz.tools import file_text
from caretz.tools.base import ToolArgumentError, ToolContext
from caretz.tools.file_access import FileProblem, checked_path, display_path, open_file
from caretz.tools.file_list import list_files
from caretz.tools.ripgrep import RipgrepMissing
from caretz.tools.search_scope import ScopeError

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")  # the images change's
FILE_MAX_BYTES = 64 * 1024
FOLDER_MAX_NAMES = 200
PROJECT_MAX_FILES = 50_000  # listed for completion
COMPLETIONS = 50  # offered at once
REASON_CHARS = 200


@dataclass(frozen=True)
class Attachment:
    shown: str  # the path as the tools show it; a folder's ends in "/"
    block: str  # what the prompt carries
    summary: str  # for the line that says what was attached: "notes.txt (1.2 KB)"


@dataclass(frozen=True)
class Attached:
    """A message with its mentions: the prompt to send, what was attached, what was
    refused (one line each)."""

    prompt: str
    attached: list[Attachment] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


def attach_mentions(text: str, ctx: ToolContext) -> Attached:
    """`text` with the files and folders its `@` words name attached after it."""
    attached: list[Attachment] = []
    refused: list[str] = []
    seen: set[str] = set()
    for mention in file_mentions(text):
        for candidate in mention.candidates:
            if candidate.lower().endswith(IMAGE_SUFFIXES):
                break  # an image: the images change attaches it
            try:
                found = _attachment(candidate, ctx)
            except (PathRefused, FileProblem, ToolArgumentError, OSError) as problem:
                reason = one_line(str(problem), REASON_CHARS).removeprefix("refused: ")
                refused.append(f"@{candidate} was not attached: {reason}")
                break
            if found is not None:
                if found.shown not in seen:
                    seen.add(found.shown)
                    attached.append(found)
                break
    if not attached:
        return Attached(text, [], refused)
    prompt = "\n\n".join([text.rstrip(), *(item.block for item in attached)])
    return Attached(prompt, attached, refused)


def _attachment(raw: str, ctx: ToolContext) -> Attachment | None:
    """The file or folder `raw` names (None: nothing there); raises PathRefused or
    FileProblem (one line) for one that may not or cannot be read."""
    checked = checked_path(ctx, raw)
    try:
        mode = os.stat(checked.real).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    _refuse_by_rule(ctx, raw, os.fspath(checked.path))
    if stat.S_ISDIR(mode):
        return _folder(raw, ctx)
    checked, fd, size = open_file(ctx, raw)
    if fd is None or size is None:
        return None
    shown = display_path(ctx, checked.path)
    try:
        data = safe_open.read_all(fd, FILE_MAX_BYTES)
    finally:
        os.close(fd)
    try:
        encoding = file_text.sniff(data, complete=len(data) == size.st_size)
    except file_text.NotText:
        raise FileProblem(f"{shown} looks like a binary file (it contains NUL bytes)") from None
    body = file_text.decoder(encoding).decode(data[len(encoding.bom) :], final=True)
    total = size.st_size
    if total > len(data):
        body += (
            f"\n[… cut: the first {_size(len(data))} of {_size(total)}; "
            "the read tool reads the rest]"
        )
    block = f'<file path="{shown}">\n{body.rstrip()}\n</file>'
    return Attachment(shown, block, f"{shown} ({_size(total)})")


def _folder(raw: str, ctx: ToolContext) -> Attachment:
    listing = list_files(ctx, raw, limit=PROJECT_MAX_FILES)
    checked = checked_path(ctx, raw)
    shown = display_path(ctx, checked.path)
    prefix = "" if shown == "." else f"{shown}/"
    names = _entries(listing.paths, prefix)
    kept = names[:FOLDER_MAX_NAMES]
    more = len(names) - len(kept)
    lines = [*kept] + ([f"[… and {more} more]"] if more else [])
    if not listing.complete:
        lines.append("[the listing is incomplete: the folder is too large]")
    if not names:
        lines.append("(no files that ignore rules and the sandbox leave visible)")
    block = f'<folder path="{prefix or "./"}">\n' + "\n".join(lines) + "\n</folder>"
    return Attachment(prefix or "./", block, f"{prefix or './'} ({_count(len(names))})")


def _entries(paths: list[str], prefix: str) -> list[str]:
    """The names directly in the folder: files, and folders (with "/") that hold some."""
    names: dict[str, None] = {}
    for path in paths:
        below = path.removeprefix(prefix)
        first, slash, _ = below.partition("/")
        names[first + slash] = None
    return sorted(names)


def _refuse_by_rule(ctx: ToolContext, raw: str, path: str) -> None:
    if ctx.rules is None:
        return
    decision = ctx.rules.check_path("read", path, ctx.workspace)
    if decision.outcome == "deny":
        raise PathRefused(f"refused: {raw}: {decision.reason}")


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def _count(entries: int) -> str:
    return "1 entry" if entries == 1 else f"{entries} entries"


class ProjectFiles:
    """The project's files and folders for completion, listed on first use and kept until
    `forget` (the next prompt lists them again). Safe to use from the completion thread."""

    def __init__(self, context: Callable[[], ToolContext]):
        self._context = context
        self._lock = threading.Lock()
        self._entries: list[str] | None = None

    def forget(self) -> None:
        with self._lock:
            self._entries = None

    def entries(self) -> list[str]:
        """Every file and folder ("dir/"), sorted; none when the listing fails."""
        with self._lock:
            if self._entries is None:
                self._entries = self._list()
            return self._entries

    def _list(self) -> list[str]:
        try:
            listing = list_files(self._context(), limit=PROJECT_MAX_FILES)
        except (PathRefused, ScopeError, RipgrepMissing, OSError):
            return []
        folders = {path[: index + 1] for path in listing.paths for index in _slashes(path)}
        files = [path for path in listing.paths if not path.lower().endswith(IMAGE_SUFFIXES)]
        return sorted([*files, *folders])

    def matching(self, typed: str) -> list[str]:
        """The entries `typed` names: those it begins first, then those whose name (the
        last part) it begins, then those holding it anywhere; case-insensitive."""
        wanted = typed.lower()
        first: list[str] = []
        named: list[str] = []
        inside: list[str] = []
        for entry in self.entries():
            lowered = entry.lower()
            name = lowered.rstrip("/").rpartition("/")[2]
            if lowered.startswith(wanted):
                first.append(entry)
            elif name.startswith(wanted):
                named.append(entry)
            elif wanted in lowered:
                inside.append(entry)
            if len(first) >= COMPLETIONS:
                break
        return (first + named + inside)[:COMPLETIONS]


def _slashes(path: str) -> list[int]:
    return [index for index, char in enumerate(path) if char == "/"]
