"""The session log: append-only JSONL, one event a line, flushed per event.

Each event is a record (`caretz/session/records/`); its line is `record.to_dict()`.
`EventLog.emit` is the only writer of events.jsonl (tests/test_architecture.py), and
it writes any record: text that is no valid Unicode (a lone surrogate, a file name's
undecodable bytes), a number JSON has no word for, nesting too deep to write or a value
of no JSON type are written as the nearest valid thing, so the line stays one valid
JSON object in UTF-8 and the listeners see the record as it was written.

A line the data folder cannot take (a full disk, a read-only folder) is held, with every
line after it, and written first when the folder takes one again: the first such
failure is raised (`private_data.DataWriteFailed`, one line at the front end), the lines
after it are held without a word, and a half-written line is cut off, so the log keeps
every line written before and stays whole.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import stat
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from caretz import inbound, private_data
from caretz.lazy import lazy_module
from caretz.messages import Image
from caretz.session.records.base import Record, UnknownRecord

if TYPE_CHECKING:
    from caretz.session import images as session_images
    from caretz.session.records import parse as records_parse
else:
    # Every family of records: loaded only to read a log, never to write one.
    records_parse = lazy_module("caretz.session.records.parse")
    # The session's image files: loaded with the first image to store.
    session_images = lazy_module("caretz.session.images")

Emit = Callable[[Record], Any]
Listener = Callable[[Record], None]


class EventLog:
    """Writes each record as a `{"type": ..., "ts": ..., **fields}` line to events.jsonl.

    Listeners (the console, `--output json`) see every record as it is written.
    """

    def __init__(self, path: Path | None, clock: Callable[[], float] = time.time):
        self.path = path
        self._clock = clock
        self._file: IO[bytes] | None = None
        self._listeners: list[Listener] = []
        self._lock = threading.Lock()
        self._held: list[bytes] = []  # lines the folder could not take yet, in order
        self.failure: private_data.DataWriteFailed | None = None  # said; held since

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def unsubscribe(self, listener: Listener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def emit(self, record: Record) -> Record:
        """Stamps `record` with the time, writes its line, tells the listeners."""
        event = stamped(record, round(self._clock(), 3))
        failed = None
        if self.path is not None:
            line, event = written(event)
            with self._lock:  # tools running at the same time may emit
                failed = self._write(self.path, line)
        for listener in self._listeners:
            listener(event)
        if failed is not None:
            raise failed
        return event

    def _write(self, path: Path, line: bytes) -> private_data.DataWriteFailed | None:
        """`line` written after the lines held before it; a new failure to raise (one
        already said holds the line without a word)."""
        if line:
            self._held.append(line)
        try:
            with private_data.writing(path):
                if self._file is None:
                    private_data.make_dir(path.parent)
                    cut_torn_tail(path)
                    self._file = open_log(path, "ab")
                append_whole(self._file, b"".join(self._held))
        except private_data.DataWriteFailed as failed:
            if self.failure is not None:
                return None
            self.failure = failed
            return failed
        self._held.clear()
        self.failure = None
        return None

    def keep_images(self, images: Sequence[Image]) -> None:
        """Store the images an event about to be emitted names by `ref()`, each once, in
        the session's folder (caretz/session/images.py); nothing without a log file."""
        if self.path is None or not images:
            return
        files = session_images.ImageFiles(self.path.parent)
        with self._lock:
            for image in images:
                files.save(image)

    def close(self) -> None:
        """Closed; held lines get a last try (the failure was said when it happened)."""
        if self._held and self.path is not None and self.failure is not None:
            with self._lock:
                self._write(self.path, b"")  # the held lines alone
        if self._file is not None:
            self._file.close()
            self._file = None


def append_whole(log: IO[bytes], data: bytes) -> None:
    """`data` at the end of the log, all of it or none: a write the folder stops half-way
    is cut back off, so no torn line is left for the next one to be glued to."""
    handle = log.fileno()
    start = os.fstat(handle).st_size
    try:
        private_data.write_all(handle, data)
    except OSError:
        with contextlib.suppress(OSError):
            os.ftruncate(handle, start)
        raise


def written(record: Record) -> tuple[bytes, Record]:
    """The record's line as UTF-8, and the record as the line says it: itself, or, when
    something in it could not be written as it was, the record read back from its line."""
    data = record.to_dict()
    try:
        text = json.dumps(data, ensure_ascii=False, default=str, allow_nan=False)
        line = text.encode("utf-8")
    except (ValueError, RecursionError):  # UnicodeEncodeError is a ValueError
        text = json.dumps(writable(data), ensure_ascii=False, default=str)
        record = records_parse.parse_record(json.loads(text))
        line = text.encode("utf-8")
    return line + b"\n", record


def writable(value: Any, depth: int = 0) -> Any:
    """`value` with nothing JSON in UTF-8 cannot hold: valid text, finite numbers (others
    as their words), at most inbound.MAX_DEPTH levels, JSON's types (others as text)."""
    if isinstance(value, str):
        return inbound.clean_text(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, dict | list | tuple) and depth >= inbound.MAX_DEPTH:
        return "[nested too deep to write]"
    if isinstance(value, dict):
        return {writable(str(key)): writable(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [writable(item, depth + 1) for item in value]
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "replace")
    return inbound.clean_text(str(value))


def stamped(record: Record, ts: float) -> Record:
    """`record` at the time `ts` (an UnknownRecord's line carries it too)."""
    if isinstance(record, UnknownRecord):
        raw = {key: value for key, value in record.raw.items() if key not in ("type", "ts")}
        return UnknownRecord(raw={"type": record.type, "ts": ts, **raw}, ts=ts)
    return dataclasses.replace(record, ts=ts)


def cut_torn_tail(path: Path) -> None:
    """Cut a last line that never got its newline (the process was killed mid-write), so
    the next event starts a line of its own instead of being glued to the torn one."""
    try:
        handle = open_log(path, "rb+")
    except FileNotFoundError:
        return
    with handle:
        size = handle.seek(0, os.SEEK_END)
        if size == 0:
            return
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return
        start = max(size - _TAIL_CHUNK, 0)
        while True:
            handle.seek(start)
            newline = handle.read(size - start).rfind(b"\n")
            if newline >= 0 or start == 0:
                handle.truncate(start + newline + 1)
                return
            size, start = start, max(start - _TAIL_CHUNK, 0)


_TAIL_CHUNK = 64 * 1024


def open_log(path: Path, mode: str) -> IO[Any]:
    """The log file, never through a symlink (O_NOFOLLOW) and only if it is a regular
    file: a link planted in its place does not make caretz write elsewhere."""
    if mode.startswith("a"):  # created 0600, whatever the umask
        with private_data.writing(path):
            handle = private_data.open_file(path, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK)
    else:
        handle = os.open(path, os.O_RDWR | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    if not stat.S_ISREG(os.fstat(handle).st_mode):
        os.close(handle)
        raise IsADirectoryError(f"{path} is not a regular file")
    if mode == "ab":  # every line written whole by append_whole, nothing buffered
        return os.fdopen(handle, mode, buffering=0)
    return os.fdopen(handle, mode, encoding=None if "b" in mode else "utf-8")


def read_events(path: Path) -> Iterator[Record]:
    """Every complete event in a log, as its record (an UnknownRecord for a type this
    caretz does not know); a torn line (a killed process) or one that is not a JSON
    object is skipped."""
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if not line:
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(data, dict):
                yield records_parse.parse_record(data)
