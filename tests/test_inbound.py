"""caretz/inbound.py: data from outside read one way, or refused with one line."""

from __future__ import annotations

import json

import pytest

from caretz import inbound
from caretz.inbound import BadInput, checked, load_json, load_json_at, port_number, tool_arguments


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        ("[" * 101 + "]" * 101, "nested deeper than 100 levels"),
        ('{"a":' * 101 + "1" + "}" * 101, "nested deeper than 100 levels"),
        ("[" * 100_000, "nested deeper than 100 levels"),  # past Python's own recursion
        ('{"a": {"b": 1, "b": 2}}', "the key 'b' is given twice"),
        ('[{"x": 1, "x": 1}]', "the key 'x' is given twice"),
        ("[NaN]", "NaN is not a JSON number"),
        ('{"v": Infinity}', "Infinity is not a JSON number"),
        ("[-1e400]", "-1e400 is a number JSON cannot carry"),
        ("1" * 4301, "a number too long to read"),
        ("{'single': 1}", "not valid JSON (Expecting property name"),
        ("", "not valid JSON (Expecting value at char 0)"),
    ],
)
def test_json_from_outside_is_read_strictly(raw, said):
    with pytest.raises(BadInput) as refused:
        load_json(raw, "the reply")

    assert said in str(refused.value) and str(refused.value).startswith("the reply ")
    assert "\n" not in str(refused.value)


def test_depth_is_counted_to_the_limit_and_not_one_past():
    assert load_json("[" * 100 + "]" * 100) is not None
    assert checked({"a": [[{"b": 1}]]}) == {"a": [[{"b": 1}]]}


def test_a_text_over_its_limit_is_refused_before_it_is_parsed():
    with pytest.raises(BadInput) as refused:
        load_json('"0123456789"', "the page", limit=10)

    assert str(refused.value) == "the page is 12 characters long, more than 10"


@pytest.mark.parametrize(
    ("raw", "kept"),
    [
        ('"\\ud800"', "\ufffd"),  # a high surrogate alone
        ('"\\udc00x"', "\ufffdx"),  # a low one
        ('"\\ude00\\ud83d"', "\ufffd\ufffd"),  # a pair the wrong way round
        ('"\\ud83d\\ude00"', "\U0001f600"),  # a pair: one character
        ('{"\\udbff": 1}', {"\ufffd": 1}),  # in a key
    ],
)
def test_lone_surrogates_become_the_replacement_character(raw, kept):
    value = load_json(raw)

    assert value == kept
    json.dumps(value, ensure_ascii=False).encode("utf-8")  # writable as UTF-8 now


def test_bytes_that_are_no_utf8_are_read_with_replacement_characters():
    assert load_json(b'{"a": "\xff\xfe"}') == {"a": "\ufffd\ufffd"}


def test_tool_arguments_refuse_a_lone_surrogate_rather_than_change_it():
    arguments, problem = tool_arguments('{"content": "\\udd1e"}')

    assert arguments == {} and problem is not None
    assert problem.startswith("the arguments have a lone surrogate (\\udd1e)")
    assert '{"content": "\\udd1e"}' in problem  # what was sent, quoted


def test_tool_arguments_sent_whole_are_checked_like_streamed_ones():
    assert tool_arguments("", {"command": "ls"}) == ({"command": "ls"}, None)
    arguments, problem = tool_arguments("", {"n": float("nan")})
    assert arguments == {} and "a number JSON cannot carry (nan)" in (problem or "")


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ({"s": {1, 2}}, "a set, which is no JSON value"),
        ({"b": b"bytes"}, "a bytes, which is no JSON value"),
        ({1: "int key"}, "an object key that is no string (1)"),
        ({"f": float("inf")}, "a number JSON cannot carry (inf)"),
    ],
)
def test_values_a_library_read_are_held_to_json_too(value, said):
    with pytest.raises(BadInput) as refused:
        checked(value, "the result")

    assert str(refused.value) == f"the result has {said}"


def test_a_tuple_is_a_list():
    assert checked({"t": (1, "a")}) == {"t": [1, "a"]}


def test_json_embedded_in_prose_is_read_from_where_it_starts():
    text = 'The verdict: {"stuck": true, "reason": "\\ud800"} — done'
    value, end = load_json_at(text, text.index("{"))

    assert value == {"stuck": True, "reason": "\ufffd"} and text[end:] == " — done"
    with pytest.raises(BadInput):
        load_json_at('x {"a": 1, "a": 2}', 2)


@pytest.mark.parametrize(
    "text",
    ["²²", "٢٢", "+22", "2_2", " 22", "22 ", "0", "65536", "99999", "", "123456", "0x16", "-1"],
)
def test_a_port_is_ascii_digits_from_1_to_65535(text):
    assert port_number(text) is None


def test_ports_that_are_ports():
    assert [port_number(text) for text in ("1", "22", "08080", "65535")] == [1, 22, 8080, 65535]


def test_what_caretz_writes_is_utf8_whatever_its_text_holds():
    assert inbound.utf8("ok é") == "ok é".encode()
    assert inbound.utf8("a\ud800b\udcffc") == "a\ufffdb\ufffdc".encode()
    assert inbound.text(5) == "" and inbound.text("x\udc80") == "x\ufffd"
