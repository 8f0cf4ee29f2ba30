"""`--input-format stream-json`: user messages as JSON lines on stdin, in Claude Code's shape:

    {"type": "user", "message": {"role": "user", "content": "fix the test"}}
    {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "…"}]}}

`content` is a string or a list of text blocks (joined by blank lines). Blank lines are
skipped; anything else is a ConfigError naming the line and what is wrong with it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from caretz.config_base import ConfigError

SHAPE = '{"type": "user", "message": {"role": "user", "content": "..."}}'


def user_messages(lines: Iterable[str]) -> Iterator[str]:
    """Each user message's text, as its line arrives."""
    for number, line in enumerate(lines, 1):
        if line.strip():
            yield message_text(line, number)


def message_text(line: str, number: int) -> str:
    """The text of one input line's user message."""
    try:
        data = json.loads(line)
    except ValueError as error:
        raise _bad(number, f"not JSON ({error})") from None
    if not isinstance(data, dict):
        raise _bad(number, f"expected an object like {SHAPE}")
    if data.get("type") != "user":
        raise _bad(number, f"type {data.get('type')!r}: only user messages are read ({SHAPE})")
    message = data.get("message")
    if not isinstance(message, dict) or message.get("role", "user") != "user":
        raise _bad(number, f'"message" must be {{"role": "user", "content": ...}} ({SHAPE})')
    text = _content_text(message.get("content"), number)
    if not text.strip():
        raise _bad(number, "the message has no text")
    return text


def _content_text(content: Any, number: int) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise _bad(number, '"content" must be a string or a list of text blocks')
    texts = []
    for block in content:
        if not isinstance(block, dict) or block.get("type") != "text":
            kind = block.get("type") if isinstance(block, dict) else type(block).__name__
            raise _bad(number, f"a {kind!r} block: only text blocks are read")
        if not isinstance(block.get("text"), str):
            raise _bad(number, 'a text block needs "text": a string')
        texts.append(block["text"])
    return "\n\n".join(texts)


def _bad(number: int, problem: str) -> ConfigError:
    return ConfigError(f"--input-format stream-json: line {number}: {problem}")
