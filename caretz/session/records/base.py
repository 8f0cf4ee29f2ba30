"""What every session record shares: its type name, its time, and its JSON line's dict.

A record is a frozen dataclass whose attributes are the keys of its events.jsonl line, in
the line's order; `to_dict()` gives back the dict the line holds (`type`, `ts`, then the
fields). A field made with `optional()` is written only when set (not None). Every field
has a default, so a line from an older caretz that lacks a key still loads; such a record
remembers which keys its line lacked and leaves them out of `to_dict()` again, and keeps
the keys it does not know (a newer caretz's) after its own.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar

_OPTIONAL = {"optional": True}


def optional(default: Any = None) -> Any:
    """A field whose key is written only when its value is not None."""
    return field(default=default, metadata=_OPTIONAL)


@dataclass(frozen=True, kw_only=True)
class Record:
    """One event of the session log. Subclasses set `TYPE` and declare the fields."""

    TYPE: ClassVar[str]
    # Another order of the same keys that one writer uses (see LoopGuardBlocked): a record
    # whose written keys are exactly one of these is written in that order.
    ORDERS: ClassVar[tuple[tuple[str, ...], ...]] = ()

    ts: float | None = None  # set by EventLog.emit
    _absent: frozenset[str] = field(default=frozenset(), repr=False, compare=False)
    _extra: tuple[tuple[str, Any], ...] = field(default=(), repr=False, compare=False)

    @property
    def type(self) -> str:
        return self.TYPE

    def to_dict(self) -> dict[str, Any]:
        """The dict of this record's events.jsonl line, key for key."""
        data: dict[str, Any] = {"type": self.type, "ts": self.ts}
        names, optional_names = _layout(type(self))
        written = [
            name
            for name in names
            if name not in self._absent
            and not (name in optional_names and getattr(self, name) is None)
            and not self.omits(name)
        ]
        for order in self.ORDERS:
            if len(order) == len(written) and set(order) == set(written):
                written = list(order)
                break
        for name in written:
            data[name] = getattr(self, name)
        data.update(self._extra)
        return data

    def omits(self, name: str) -> bool:
        """A key this kind of record leaves out by a rule of its own (see CheckpointCreated)."""
        return False

    def written(self, name: str) -> bool:
        """Whether this record's line holds `name` (False for a key its line lacked)."""
        return name not in self._absent

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Record:
        """The record of one parsed line whose `type` is this class's."""
        names, optional_names = _layout(cls)
        values = {name: data[name] for name in names if name in data}
        record = cls(**values, ts=data.get("ts"))
        absent = frozenset(
            name
            for name in names
            if name not in data and name not in optional_names and not record.omits(name)
        )
        extra = tuple(
            (key, value) for key, value in data.items() if key not in values and key not in _HEAD
        )
        if absent:
            object.__setattr__(record, "_absent", absent)
        if extra:
            object.__setattr__(record, "_extra", extra)
        return record


@dataclass(frozen=True, kw_only=True)
class LoopRecord(Record):
    """An event the turn loop writes: it names the turn and the agent that ran it."""

    turn: int = 0
    agent: str = "main"


@dataclass(frozen=True, kw_only=True)
class UnknownRecord(Record):
    """A line of a type this caretz does not know (a newer or older one's), or one that is
    not a typed JSON object: kept as it was, and skipped by whatever reads records."""

    TYPE: ClassVar[str] = ""
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def type(self) -> str:
        kind = self.raw.get("type")
        return kind if isinstance(kind, str) else ""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.raw)


_HEAD = ("type", "ts")
_LAYOUTS: dict[type[Record], tuple[tuple[str, ...], frozenset[str]]] = {}


def _layout(cls: type[Record]) -> tuple[tuple[str, ...], frozenset[str]]:
    """A record class's keys in writing order, and those written only when set."""
    layout = _LAYOUTS.get(cls)
    if layout is None:
        fields = [
            each
            for each in dataclasses.fields(cls)
            if each.name != "ts" and not each.name.startswith("_")
        ]
        names = tuple(each.name for each in fields)
        optional_names = frozenset(each.name for each in fields if each.metadata.get("optional"))
        layout = _LAYOUTS[cls] = (names, optional_names)
    return layout
