"""The event log writes any record: whatever text, numbers or nesting a record holds, its
line is one valid JSON object in UTF-8, and the listeners see the record as written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from caretz.session.events import EventLog, read_events
from caretz.session.records.loop import ToolCalled, ToolReturned, TurnStarted


def deep(levels: int) -> dict:
    value: dict = {}
    for _ in range(levels):
        value = {"a": value}
    return value


@pytest.mark.parametrize(
    "record",
    [
        ToolReturned(index=0, call_id="c", name="bash", ok=True, output="lone \ud800 high"),
        ToolReturned(index=0, call_id="c", name="glob", ok=True, output="caf\udce9.txt"),  # bytes
        TurnStarted(prompt="a pair reversed \ude00\ud83d", model="m"),
        ToolCalled(index=0, call={"id": "c", "name": "t", "arguments": {"\udfff": "key"}}),
        ToolCalled(index=0, call={"id": "c", "name": "t", "arguments": {"n": float("nan")}}),
        ToolCalled(index=0, call={"id": "c", "name": "t", "arguments": {"n": -float("inf")}}),
        ToolCalled(index=0, call={"id": "c", "name": "t", "arguments": deep(3000)}),
        ToolCalled(index=0, call={"id": "c", "name": "t", "arguments": {"b": b"\xff\x00"}}),
        ToolCalled(index=0, call={"id": "c", "name": "t", "arguments": {"s": {1, 2}}}),
    ],
    ids=["surrogate", "undecodable", "pair", "key", "nan", "inf", "deep", "bytes", "set"],
)
def test_any_record_is_written_as_one_valid_json_line(tmp_path: Path, record):
    path = tmp_path / "events.jsonl"
    log = EventLog(path)
    seen = []
    log.subscribe(seen.append)

    log.emit(record)
    log.emit(ToolReturned(index=1, call_id="d", name="bash", ok=True, output="after"))

    lines = path.read_bytes().decode("utf-8").splitlines()  # strict UTF-8
    assert len(lines) == 2
    for line in lines:
        json.loads(line, parse_constant=lambda name: pytest.fail(f"{name} in the log"))
    assert [type(event).__name__ for event in read_events(path)] == [
        type(record).__name__,
        "ToolReturned",
    ]
    for text in texts([event.to_dict() for event in seen]):  # what a view prints
        text.encode("utf-8")


def texts(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [*texts(list(value)), *texts(list(value.values()))]
    if isinstance(value, list | tuple):
        return [text for item in value for text in texts(item)]
    return []
