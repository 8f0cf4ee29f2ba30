"""Command output kept within a budget: the start and end of a finished command's output
(HeadTailBuffer), the whole of a long one in a file the read tool can open (FullOutput),
the pipe readers that fill them or a background job's log, and the text a model reads
(model_text: no terminal escapes, `\r` progress lines collapsed)."""

from __future__ import annotations

import codecs
import os
import re
import tempfile
import threading
from collections import deque
from collections.abc import Callable
from typing import IO

from caretz.lazy_dataclass import lazy_dataclass

# Test summaries and errors sit at the end of output, so the tail gets the larger share.
HEAD_SHARE = 0.4
# How far a cut may move to land on a line boundary.
LINE_SNAP_CHARS = 200
# The most of one command's output kept in its file (past it, the file says it stops).
FULL_OUTPUT_MAX_CHARS = 200_000_000

# CSI (colours, cursor moves), OSC (titles, hyperlinks) and the two-byte escapes.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[()*+][0-9A-Za-z]"
    r"|\x1b[@-Z\\-_=>78]"
)
# A line rewritten in place: everything up to its last carriage return (CRLF aside).
_OVERWRITTEN = re.compile(r"[^\n]*\r(?=[^\n\r])")


def model_text(text: str) -> str:
    """`text` as a model should read it: terminal escape sequences removed, and each line
    a progress bar rewrote with `\r` reduced to what follows its last `\r`."""
    if "\x1b" in text:
        text = _ESCAPES.sub("", text)
    if "\r" in text:
        text = _OVERWRITTEN.sub("", text).replace("\r\n", "\n").replace("\r", "")
    return text


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

    def render(self, where: str | None = None) -> str:
        """The output, cut around a marker line when it outgrew the limit; `where` (a line
        saying where the whole output is) goes under the marker, within the limit."""
        with self._lock:
            return self._render(where)

    def _render(self, where: str | None = None) -> str:
        tail = "".join(self._tail_parts)
        tail = tail[-self.tail_cap :] if self.tail_cap else ""
        if self.total == len(self._head) + len(tail):
            return self._head + tail
        return self._render_cut(self._head, tail, f"{where}\n" if where else "")

    def _render_cut(self, head: str, tail: str, where: str = "") -> str:
        newline = head.rfind("\n")
        if newline >= len(head) - LINE_SNAP_CHARS:
            head = head[: newline + 1]
        marker_room = len(f"[... {self.total} characters omitted ...]\n\n{where}")
        room = max(self.limit - len(head) - marker_room, 0)
        tail = tail[len(tail) - room :] if room else ""
        newline = tail.find("\n")
        if 0 <= newline < LINE_SNAP_CHARS:
            tail = tail[newline + 1 :]
        omitted = self.total - len(head) - len(tail)
        separator = "" if not head or head.endswith("\n") else "\n"
        return f"{head}{separator}[... {omitted} characters omitted ...]\n{where}{tail}"


class ModelTextStream:
    """model_text over a stream that arrives in pieces: a line is cleaned once it is whole
    (an escape or a run of `\r` updates may be split between reads). A line still open is
    collapsed to what follows its last `\r` as it grows, so a progress bar that never
    ends its line stays small; past `carry_max` characters it is passed on as it is."""

    def __init__(self, add: Callable[[str], None], carry_max: int = 65536):
        self._add = add
        self._carry = ""
        self._carry_max = carry_max
        self._lock = threading.Lock()

    def feed(self, text: str) -> None:
        with self._lock:
            text = self._carry + text
            cut = text.rfind("\n") + 1
            done, carry = text[:cut], text[cut:]
            last = carry.rfind("\r", 0, len(carry) - 1)  # a final \r may start a CRLF
            if last >= 0:
                carry = carry[last + 1 :]
            if len(carry) > self._carry_max:
                done, carry = done + carry, ""
            self._carry = carry
        if done:
            self._add(model_text(done))

    def flush(self) -> None:
        with self._lock:
            rest, self._carry = self._carry, ""
        if rest:
            self._add(model_text(rest))


class FullOutput:
    """All of a command's output (as the model reads it), written to a file of its own in
    the temporary directory once it outgrows `limit`, so that the cut result can say
    where the rest is. The file is private to the user (mkstemp) and the read tool may
    open it; it is not removed when the session ends."""

    def __init__(self, limit: int):
        self.limit = max(limit, 0)
        self._lock = threading.Lock()
        self._pending: list[str] = []  # until the output outgrows the limit
        self._file: IO[str] | None = None
        self.path: str | None = None
        self.chars = 0  # all of it, as the model reads it
        self.lines = 0
        self.written = 0
        self.failed: str | None = None  # why the file could not be written

    def add(self, text: str) -> None:
        """Text as the model reads it (ModelTextStream's)."""
        with self._lock:
            self.chars += len(text)
            self.lines += text.count("\n")
            if self._file is not None:
                self._write(text)
            elif self.path is None and self.failed is None:
                self._pending.append(text)
                if self.chars > self.limit:
                    self._open()

    def _open(self) -> None:
        pending, self._pending = "".join(self._pending), []
        try:
            handle, self.path = tempfile.mkstemp(prefix="caretz-output-", suffix=".txt")
            self._file = os.fdopen(handle, "w", encoding="utf-8", errors="replace")
        except OSError as error:
            self.failed = error.strerror or str(error)
            return
        self._write(pending)

    def _write(self, text: str) -> None:
        assert self._file is not None
        room = FULL_OUTPUT_MAX_CHARS - self.written
        if room <= 0:
            return
        try:
            self._file.write(text[:room])
        except OSError as error:
            self.failed = error.strerror or str(error)
            return
        self.written += min(len(text), room)

    def close(self) -> None:
        with self._lock:
            if self._file is None:
                return
            if self.chars > self.written:
                self._file.write(f"\n[the output stops here: {self.chars:,} characters in all]\n")
            self._file.close()
            self._file = None

    def notice(self) -> str | None:
        """The line that says where the whole output is, once it outgrew the limit."""
        self.close()
        if self.path is None:
            if self.failed:
                return f"[the whole output could not be kept: {self.failed}]"
            return None
        lines = f"{self.lines:,} lines" if self.lines != 1 else "1 line"
        return (
            f"[the whole output ({self.chars:,} characters, {lines}) is in {self.path}: "
            "read it with the read tool, offset = the line to start at]"
        )


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


@lazy_dataclass(frozen=True, kw_only=True)
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
            return LogSlice(
                text=text,
                offset=start,
                next_offset=start + len(text),
                dropped=max(self._first - offset, 0),
                end=self._end,
            )

    def _joined(self) -> str:
        if len(self._chunks) > 1:
            self._chunks = deque(["".join(self._chunks)])
        return self._chunks[0] if self._chunks else ""
