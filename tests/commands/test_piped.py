"""Reading stdin for a headless run, on real pipes, files and a pseudo-terminal."""

from __future__ import annotations

import contextlib
import os
import pty
import threading

import pytest

from caretz.commands.piped import (
    PIPED_LIMIT,
    PROMPT_LIMIT,
    Piped,
    piped_prompt,
    prompt_with_stdin,
    read_piped,
    with_piped_text,
)
from caretz.config_base import ConfigError


def piped(data: bytes, wait_s: float | None = 5.0) -> Piped:
    """What read_piped makes of `data` written to a pipe by another thread, then closed."""
    read_end, write_end = os.pipe()

    def write() -> None:
        with contextlib.suppress(BrokenPipeError), os.fdopen(write_end, "wb") as writer:
            writer.write(data)  # past the limit the reader closes its end: EPIPE ends this

    writer = threading.Thread(target=write)
    writer.start()
    try:
        return read_piped(read_end, wait_s)
    finally:
        os.close(read_end)  # a writer still blocked on a full pipe gets EPIPE and ends
        writer.join()


def test_piped_text_is_read_to_its_end():
    assert piped(b"line one\nline two\n") == Piped("line one\nline two\n")


def test_an_empty_pipe_adds_nothing():
    result = piped(b"")
    assert result == Piped("") and not result.silent
    assert with_piped_text("summarize", result) == "summarize"


def test_an_open_pipe_that_sends_nothing_is_left_after_the_wait():
    read_end, write_end = os.pipe()  # never written, never closed until the end
    try:
        assert read_piped(read_end, wait_s=0.05) == Piped(silent=True)
    finally:
        os.close(read_end)
        os.close(write_end)


def test_a_regular_file_is_read(tmp_path):
    path = tmp_path / "log.txt"
    path.write_text("error: disk full\n")
    with path.open("rb") as file:
        assert read_piped(file.fileno(), wait_s=0.05).text == "error: disk full\n"


def test_more_than_the_limit_is_cut_at_a_line_and_the_rest_left_unread():
    line = b"x" * 99 + b"\n"
    result = piped(line * (PIPED_LIMIT // 100 + 50))
    assert result.cut
    assert len(result.text) <= PIPED_LIMIT and result.text.endswith("x\n")
    joined = with_piped_text("summarize", result)
    assert joined.endswith(
        "(stdin was cut: only its first 256 KiB are here; the rest was not read)"
    )


def test_the_piped_text_follows_the_prompt_in_a_fenced_block():
    assert with_piped_text("summarize", Piped("a\nb\n")) == "summarize\n\n```\na\nb\n```"


def test_the_fence_is_longer_than_any_backticks_in_the_piped_text():
    text = "see:\n```python\nx = 1\n````\n"
    joined = with_piped_text("explain", Piped(text))
    assert joined == f"explain\n\n`````\n{text.strip()}\n`````"


def test_a_prompt_read_from_stdin_is_its_text_stripped():
    assert piped_prompt(Piped("  fix the test\n")) == "fix the test"
    assert piped_prompt(Piped(" \n")) == ""


def test_a_terminal_is_never_read():
    leader, follower = pty.openpty()
    try:
        os.write(leader, b"typed ahead\n")  # waiting input a read would take
        assert prompt_with_stdin("summarize", follower) == "summarize"
        assert prompt_with_stdin(None, follower) is None
        with pytest.raises(ConfigError, match="-p - reads the prompt from stdin, but stdin is"):
            prompt_with_stdin("-", follower)
    finally:
        os.close(leader)
        os.close(follower)


def with_stdin(data: bytes, prompt: str | None) -> str | None:
    read_end, write_end = os.pipe()
    os.write(write_end, data)
    os.close(write_end)
    try:
        return prompt_with_stdin(prompt, read_end)
    finally:
        os.close(read_end)


def test_the_prompt_with_what_stdin_holds():
    assert with_stdin(b"log line\n", "summarize") == "summarize\n\n```\nlog line\n```"
    assert with_stdin(b"", "summarize") == "summarize"
    assert with_stdin(b"  fix it\n", "-") == "fix it"
    assert with_stdin(b"fix it\n", None) == "fix it"
    assert with_stdin(b"", None) is None
    with pytest.raises(ConfigError, match="-p - read an empty stdin"):
        with_stdin(b" \n", "-")


def test_a_closed_stdin_reads_as_empty():
    read_end, write_end = os.pipe()
    os.close(read_end)
    os.close(write_end)
    assert read_piped(read_end) == Piped() and read_piped(read_end, wait_s=0.05) == Piped()


def piped_prompt_of(data: bytes, prompt: str | None = "-") -> str | None:
    """prompt_with_stdin over a pipe another thread writes `data` to, then closes."""
    read_end, write_end = os.pipe()

    def write() -> None:
        with contextlib.suppress(BrokenPipeError), os.fdopen(write_end, "wb") as writer:
            writer.write(data)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        return prompt_with_stdin(prompt, read_end)
    finally:
        os.close(read_end)
        writer.join()


def test_the_prompt_itself_from_stdin_is_read_whole_past_the_piped_limit():
    task = "".join(f"step {n}: do the thing\n" for n in range(40_000))  # ~900 KiB
    assert len(task) > 3 * PIPED_LIMIT
    assert piped_prompt_of(task.encode()) == task.strip()
    assert piped_prompt_of(task.encode(), None) == task.strip()


def test_a_prompt_on_stdin_no_model_could_take_is_refused_not_cut():
    with pytest.raises(ConfigError, match="the prompt on stdin is over 32 MiB"):
        piped_prompt_of(b"x" * (PROMPT_LIMIT + 1))
