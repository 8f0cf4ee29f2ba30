"""A log line's dict to its record: the table of every record type, by its name."""

from __future__ import annotations

from typing import Any

from caretz.session.records import checkpoints, goal, guard, hooks, loop, mcp, permissions, session
from caretz.session.records.base import Record, UnknownRecord

FAMILIES = (loop, session, guard, goal, hooks, checkpoints, permissions, mcp)


def _record_types() -> dict[str, type[Record]]:
    found: dict[str, type[Record]] = {}
    for family in FAMILIES:
        for value in vars(family).values():
            if (
                isinstance(value, type)
                and issubclass(value, Record)
                and value.__module__ == family.__name__
                and "TYPE" in vars(value)
            ):
                found[value.TYPE] = value
    return found


RECORD_TYPES: dict[str, type[Record]] = _record_types()


def parse_record(data: dict[str, Any]) -> Record:
    """The record of one parsed line; a line of an unknown type, or of none, is an
    UnknownRecord that keeps what the line held."""
    name = data.get("type")
    kind = RECORD_TYPES.get(name) if isinstance(name, str) else None
    if kind is None:
        return UnknownRecord(raw=data, ts=_ts(data))
    return kind.from_dict(data)


def _ts(data: dict[str, Any]) -> float | None:
    ts = data.get("ts")
    return ts if isinstance(ts, int | float) else None
