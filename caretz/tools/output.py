"""Command output kept within a budget: the start and end of a finished command's output
(HeadTailBuffer), and the pipe readers that fill it or a background job's log."""

from __future__ import annotations

import codecs
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

# Test summaries and errors sit at the end of output, so the tail gets the larger share.
HEAD_SHARE = 0.4
# How far a cut may move to land on a line boundary.
LINE_SNAP_CHARS = 200


class HeadTailBuffer:
    """Keeps the first and last characters of a stream within `limit`, counting the rest.

    Safe to fill from a reader thread while another renders it.
    """

    def __init__(self, limit: int):
        self._lock = threading.Lock()
        self.limit = max(limit, 0)
        self.head_cap = int(self.limit * HEAD_SHARE)
        self.tail_cap = self.limit - self.head_cap
        self.total = 0
        self._head = ""
        self._tail_parts: list[str] = []
        self._tail_len = 0

    def add(self, text: str) -> None:
        with self._lock:
            self._add(text)

    def _add(self, text: str) -> None:
        self.total += len(text)
        if len(self._head) < self.head_cap:
            room = self.head_cap - len(self._head)
            self._head += text[:room]
            text = text[room:]
        if not text:
            return
        self._tail_parts.append(text)
        self._tail_len += len(text)
        if self._tail_len > 2 * self.tail_cap + 4096:
            kept = "".join(self._tail_parts)[-self.tail_cap :] if self.tail_cap else ""
            self._tail_parts, self._tail_len = [kept], len(kept)

    def render(self) -> str:
        with self._lock:
            return self._render()

    def _render(self) -> str:
        tail = "".join(self._tail_parts)
        tail = tail[-self.tail_cap :] if self.tail_cap else ""
        if self.total == len(self._head) + len(tail):
            return self._head + tail
        return self._render_cut(self._head, tail)

    def _render_cut(self, head: str, tail: str) -> str:
        newline = head.rfind("\n")
        if newline >= len(head) - LINE_SNAP_CHARS:
            head = head[: newline + 1]
        marker_room = len(f"[... {self.total} characters omitted ...]\n\n")
        room = max(self.limit - len(head) - marker_room, 0)
        tail = tail[len(tail) - room :] if room else ""
        newline = tail.find("\n")
        if 0 <= newline < LINE_SNAP_CHARS:
            tail = tail[newline + 1 :]
        omitted = self.total - len(head) - len(tail)
        separator = "" if not head or head.endswith("\n") else "\n"
        return f"{head}{separator}[... {omitted} characters omitted ...]\n{tail}"


def keep_head_and_tail(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, keeping its start and end around a marker line."""
    buffer = HeadTailBuffer(limit)
    buffer.add(text)
    return buffer.render()


class PipeReader(threading.Thread):
    """Drains a command's output pipe, handing the decoded text to `add`.

    A daemon: if a background process keeps the pipe open after the command
    exits, the reader goes on draining it (so that process never blocks on a
    full pipe) while the tool returns.
    """

    def __init__(
        self,
        stream: IO[bytes],
        add: Callable[[str], None],
        done: Callable[[], None] = lambda: None,
    ):
        super().__init__(name="caretz-command-output", daemon=True)
        self._stream = stream
        self._add = add
        self._done = done  # called once the pipe has reached its end
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def run(self) -> None:
        read = getattr(self._stream, "read1", self._stream.read)
        try:
            while chunk := read(65536):
                self._add(self._decoder.decode(chunk))
            self._add(self._decoder.decode(b"", final=True))
        finally:
            self._stream.close()
            self._done()


@dataclass(frozen=True)
class LogSlice:
    text: str
    offset: int  # where `text` starts, counted in characters from the job's start
    next_offset: int  # where the next read carries on
    dropped: int  # characters asked for that are no longer kept
    end: int  # everything written so far


class RollingLog:
    """A background job's output: its last `keep` characters, addressed by offsets that
    count from the job's start, so a reader can carry on where it stopped."""

    def __init__(self, keep: int = 1_000_000):
        self.keep = keep
        self._changed = threading.Condition()
        self._chunks: deque[str] = deque()
        self._first = 0  # offset of the first kept character
        self._end = 0
        self.closed = False  # the pipe reached its end

    def add(self, text: str) -> None:
        if not text:
            return
        with self._changed:
            self._chunks.append(text)
            self._end += len(text)
            while self._end - self._first - len(self._chunks[0]) >= self.keep:
                self._first += len(self._chunks.popleft())
            self._changed.notify_all()

    def close(self) -> None:
        with self._changed:
            self.closed = True
            self._changed.notify_all()

    @property
    def end(self) -> int:
        with self._changed:
            return self._end

    def wait_past(self, offset: int, timeout: float) -> None:
        """Until there is output beyond `offset`, the pipe closes, or `timeout` passes."""
        with self._changed:
            self._changed.wait_for(lambda: self._end > offset or self.closed, timeout)

    def read(self, offset: int, limit: int) -> LogSlice:
        with self._changed:
            start = min(max(offset, self._first), self._end)
            at = start - self._first
            text = self._joined()[at : at + limit]
            return LogSlice(text, start, start + len(text), max(self._first - offset, 0), self._end)

    def _joined(self) -> str:
        if len(self._chunks) > 1:
            self._chunks = deque(["".join(self._chunks)])
        return self._chunks[0] if self._chunks else ""
