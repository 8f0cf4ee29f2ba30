"""`--input-format stream-json`: user messages as JSON lines on stdin, in Claude Code's shape,
each answered in one session as `--output json` answers (docs/headless.md):

    {"type": "user", "message": {"role": "user", "content": "fix the test"}}
    {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "…"}]}}

`content` is a string or a list of text blocks (joined by blank lines). Blank lines are
skipped; anything else is a ConfigError naming the line and what is wrong with it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from caretz import inbound
from caretz.agent.signals import interrupted_by, signals_interrupt
from caretz.api.result import refused_before_start
from caretz.api.session import Session
from caretz.config_base import ConfigError
from caretz.ui.console import JsonOutput
from caretz.usage_error import fail

if TYPE_CHECKING:
    from caretz.config.overrides import Flags
    from caretz.config.settings import Settings

SHAPE = '{"type": "user", "message": {"role": "user", "content": "..."}}'


def user_messages(lines: Iterable[str]) -> Iterator[str]:
    """Each user message's text, as its line arrives."""
    for number, line in enumerate(lines, 1):
        if line.strip():
            yield message_text(line, number)


def message_text(line: str, number: int) -> str:
    """The text of one input line's user message."""
    try:
        data = inbound.load_json(line, "the line")
    except inbound.BadInput as problem:
        raise _bad(number, f"not JSON ({problem})") from None
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


def stream_json_problem(flags: Flags, prompt: str | None, goal: str | None) -> str | None:
    """What keeps a stream-json run from starting, if anything."""
    if prompt is not None:
        return "--input-format stream-json reads the prompts from stdin: drop -p"
    if goal is not None:
        return "--input-format stream-json takes no --goal: send the work as messages"
    output = flags.get("output")
    if output not in (None, "json"):
        return f"--input-format stream-json answers as --output json, not --output {output}"
    if os.isatty(0):
        return "--input-format stream-json reads JSON lines from stdin, but stdin is a terminal"
    return None


def run_stream_json(settings: Settings, resume: str | None) -> int:
    """Answer each user message on stdin in one session, as `--output json` does; the
    exit code is the last answer's (an interrupted one ends the run)."""
    output = JsonOutput()
    session: Session | None = None
    code = 0
    try:
        with signals_interrupt():
            for text in user_messages(iter(sys.stdin.readline, "")):
                if session is None:
                    session = Session.from_settings(
                        settings, view=output, resume=resume, mcp_background=True
                    )
                result = session.run(text)
                output.closing(result.to_dict())
                code = result.exit_code
                if result.status == "interrupted":
                    break
    except ConfigError as error:  # a bad line, or settings the session cannot open with
        return refuse(output, str(error), session.id if session is not None else None)
    except KeyboardInterrupt as interrupt:  # while waiting for the next message
        return interrupted_by(interrupt).outcome.exit_code
    finally:
        if session is not None:
            session.close()
    if session is None:
        return refuse(output, "--input-format stream-json: no user message on stdin", None)
    return code


def refuse(output: JsonOutput, message: str, session_id: str | None) -> int:
    """One line on stderr, and the refusal's result object on stdout (exit 2)."""
    refused = replace(refused_before_start(message), session_id=session_id)
    fail(message)
    output.closing(refused.to_dict())
    return refused.exit_code
