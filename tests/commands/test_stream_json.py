"""Reading `--input-format stream-json` lines: Claude Code's user messages."""

from __future__ import annotations

import json

import pytest

from caretz.commands.stream_json import user_messages
from caretz.config_base import ConfigError


def line(content: object, **message: object) -> str:
    return json.dumps({"type": "user", "message": {"role": "user", "content": content, **message}})


def test_string_and_text_block_contents_are_read_in_order_and_blank_lines_skipped():
    lines = [
        line("first"),
        "\n",
        line([{"type": "text", "text": "second"}, {"type": "text", "text": "part two"}]),
    ]
    assert list(user_messages(lines)) == ["first", "second\n\npart two"]


def test_messages_are_read_as_their_lines_arrive():
    def lines():
        yield line("one")
        raise AssertionError("read ahead of the first message")

    assert next(user_messages(lines())) == "one"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("not json", "line 1: not JSON"),
        ("[1]", "line 1: expected an object"),
        ('{"type": "control_request"}', "line 1: type 'control_request': only user messages"),
        ('{"type": "user", "message": "hi"}', 'line 1: "message" must be'),
        (line("x", role="assistant"), 'line 1: "message" must be'),
        (line(42), 'line 1: "content" must be a string or a list of text blocks'),
        (line([{"type": "image", "source": {}}]), "line 1: a 'image' block: only text blocks"),
        (line([{"type": "text"}]), 'line 1: a text block needs "text"'),
        (line("   "), "line 1: the message has no text"),
    ],
)
def test_a_bad_line_is_one_error_naming_the_line_and_the_problem(text, problem):
    with pytest.raises(ConfigError) as caught:
        list(user_messages([text]))
    assert str(caught.value).startswith("--input-format stream-json: ")
    assert problem in str(caught.value)
    assert "\n" not in str(caught.value)


def test_the_line_number_counts_blank_lines():
    with pytest.raises(ConfigError, match="line 3: not JSON"):
        list(user_messages([line("ok"), "", "{"]))
