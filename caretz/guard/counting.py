"""The counting the checks share: a count that fires every `threshold` more.

A check counts something (a failure, a call, a round), fires when the count
since its last firing reaches a threshold, and counts again from there; a
verdict on what it counts restarts it the same way, because the judge has seen
that thing as it is.
`Count` is that count; `Streak` counts an unbroken run of one key; `Tally`
counts each key wherever it comes up.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass


@dataclass
class Count:
    value: int = 0
    base: int = 0  # the value when it last fired, or when a verdict restarted it

    def add(self) -> Count:
        self.value += 1
        return self

    @property
    def since(self) -> int:
        """What came since the last firing or restart."""
        return self.value - self.base

    def reached(self, threshold: int) -> bool:
        """Whether `threshold` more have come since the last firing (0: the check is off)."""
        return bool(threshold) and self.since >= threshold

    def restart(self) -> None:
        self.base = self.value


class Streak:
    """An unbroken run of one key: a different key starts a new run."""

    def __init__(self) -> None:
        self.key: Hashable | None = None
        self.count = Count()

    def add(self, key: Hashable) -> Count:
        if key != self.key:
            self.key, self.count = key, Count()
        return self.count.add()

    def clear(self) -> None:
        self.key, self.count = None, Count()


class Tally:
    """A count per key, wherever in the turn the key comes up."""

    def __init__(self) -> None:
        self._counts: dict[Hashable, Count] = {}

    def add(self, key: Hashable) -> Count:
        return self._counts.setdefault(key, Count()).add()

    def restart(self) -> None:
        """Every key counts again from here."""
        self._counts.clear()

    def restart_key(self, key: Hashable) -> None:
        """This key counts again from here; the others keep their counts."""
        count = self._counts.get(key)
        if count is not None:
            count.restart()
