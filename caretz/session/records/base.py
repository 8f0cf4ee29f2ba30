"""What every session record shares: its type name, its time, and its JSON line's dict.

A record is a dataclass whose attributes are the keys of its events.jsonl line, in the
line's order; `to_dict()` gives back the dict the line holds (`type`, `ts`, then the
fields). A field made with `optional()` is written only when set (not None). Every field
has a default, so a line from an older caretz that lacks a key still loads; such a record
remembers which keys its line lacked and leaves them out of `to_dict()` again, and keeps
the keys it does not know (a newer caretz's) after its own.

Records are frozen by this base class (`__setattr__` refuses) and built by its one
keyword `__init__`, so `@record` has `dataclass` generate no code: generating and
compiling an `__init__`, `__eq__`, `__repr__` and the frozen `__setattr__` for each of 49
classes cost `caretz -p` about 40 ms of start-up.
"""

from __future__ import annotations

import dataclasses
from dataclasses import FrozenInstanceError, dataclass, field
from typing import Any, ClassVar, dataclass_transform

_OPTIONAL = {"optional": True}


def optional(default: Any = None) -> Any:
    """A field whose key is written only when its value is not None."""
    return field(default=default, metadata=_OPTIONAL)


@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(field,))
def record(cls: type[Any]) -> type[Any]:
    """Make `cls` a record: a dataclass of its fields, whose methods are Record's."""
    if cls.__doc__ is None:  # else dataclass writes one from inspect.signature: slow
        cls.__doc__ = f"The `{getattr(cls, 'TYPE', cls.__name__)}` record."
    return dataclass(init=False, repr=False, eq=False)(cls)


@record
class Record:
    """One event of the session log. Subclasses set `TYPE` and declare the fields."""

    TYPE: ClassVar[str]
    # Another order of the same keys that one writer uses (see LoopGuardBlocked): a record
    # whose written keys are exactly one of these is written in that order.
    ORDERS: ClassVar[tuple[tuple[str, ...], ...]] = ()

    ts: float | None = None  # set by EventLog.emit
    _absent: frozenset[str] = frozenset()  # keys its line lacked (an older caretz's)
    _extra: tuple[tuple[str, Any], ...] = ()  # keys its line had that it does not know

    def __init__(self, **values: Any) -> None:
        for name, default, factory in _layout(type(self)).defaults:
            value = values.pop(name) if name in values else default
            object.__setattr__(self, name, factory() if value is _FACTORY else value)
        if values:
            unknown = ", ".join(sorted(values))
            raise TypeError(f"{type(self).__name__} has no field {unknown}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        names = _layout(type(self)).names
        return all(getattr(self, name) == getattr(other, name) for name in ("ts", *names))

    __hash__ = None  # type: ignore[assignment]  # equal by value, and its lists are mutable

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _layout(type(self)).names)
        return f"{type(self).__name__}({shown})"

    @property
    def type(self) -> str:
        return self.TYPE

    def to_dict(self) -> dict[str, Any]:
        """The dict of this record's events.jsonl line, key for key."""
        data: dict[str, Any] = {"type": self.type, "ts": self.ts}
        layout = _layout(type(self))
        written = [
            name
            for name in layout.names
            if name not in self._absent
            and not (name in layout.optional and getattr(self, name) is None)
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
        layout = _layout(cls)
        values = {name: data[name] for name in layout.names if name in data}
        made = cls(**values, ts=data.get("ts"))
        absent = frozenset(
            name
            for name in layout.names
            if name not in data and name not in layout.optional and not made.omits(name)
        )
        extra = tuple(
            (key, value) for key, value in data.items() if key not in values and key not in _HEAD
        )
        if absent:
            object.__setattr__(made, "_absent", absent)
        if extra:
            object.__setattr__(made, "_extra", extra)
        return made


@record
class LoopRecord(Record):
    """An event the turn loop writes: it names the turn and the agent that ran it."""

    turn: int = 0
    agent: str = "main"


# The families, here so that a view can tell a family's record without loading the
# family's module (an event of it exists only once its module is loaded).


@record
class LoopGuardRecord(Record):
    """Any of the loop guard's records (`LoopGuard.*`)."""


@record
class PermissionRecord(Record):
    """Any of the permission check's records (`Permission.*`)."""


@record
class GoalRecord(Record):
    """Any of a goal's records (`Goal.*`)."""


@record
class McpRecord(Record):
    """Any of the MCP servers' records (`Mcp.*`)."""


@record
class CheckpointRecord(Record):
    """Any of the checkpoints' records (`Checkpoint.*`)."""


@record
class HookRecord(Record):
    """Any of the hooks' records (`Hook.*`)."""


@record
class UnknownRecord(Record):
    """A line of a type this caretz does not know (a newer or older one's), or of none:
    kept as it was, and skipped by whatever reads records."""

    TYPE: ClassVar[str] = ""
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def type(self) -> str:
        kind = self.raw.get("type")
        return kind if isinstance(kind, str) else ""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.raw)


_HEAD = ("type", "ts")
_FACTORY = object()  # stands for "call the field's default_factory"


class _RecordLayout:
    """A record class's keys, read once from its dataclass fields."""

    __slots__ = ("defaults", "names", "optional")

    def __init__(self, fields: tuple[dataclasses.Field[Any], ...]):
        keys = [each for each in fields if each.name != "ts" and not each.name.startswith("_")]
        self.names = tuple(each.name for each in keys)  # the line's keys after type and ts
        self.optional = frozenset(each.name for each in keys if each.metadata.get("optional"))
        self.defaults = tuple(_default(each) for each in fields)  # (name, default, factory)


_LAYOUTS: dict[type[Record], _RecordLayout] = {}


def _layout(cls: type[Record]) -> _RecordLayout:
    """A record class's keys and defaults."""
    layout = _LAYOUTS.get(cls)
    if layout is None:
        layout = _LAYOUTS[cls] = _RecordLayout(dataclasses.fields(cls))
    return layout


def _default(each: dataclasses.Field[Any]) -> tuple[str, Any, Any]:
    if each.default_factory is not dataclasses.MISSING:
        return each.name, _FACTORY, each.default_factory
    return each.name, each.default, None
