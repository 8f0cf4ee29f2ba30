"""`/loop INTERVAL PROMPT`: a prompt the interactive session runs as a turn every INTERVAL.

Loops belong to the open session and run only while it is idle: the prompt loop
asks `due()` while it waits for input and runs a due loop's prompt as an ordinary
(guarded) turn when nobody is typing. A run that comes due while a turn runs waits
for the prompt; runs missed meanwhile are not made up.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass

MIN_INTERVAL_S = 1.0
_PART = re.compile(r"(\d+(?:\.\d+)?)(s|m|h|d)")
_UNIT_S = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_interval(text: str) -> float:
    """'30s', '10m', '2h', '1h30m', '1d' → seconds; raises ValueError naming the problem."""
    compact = text.strip().lower()
    parts = _PART.findall(compact)
    if not compact or "".join(number + unit for number, unit in parts) != compact:
        raise ValueError(f"{text!r} is not an interval such as 30s, 10m, 2h or 1h30m")
    seconds = sum(float(number) * _UNIT_S[unit] for number, unit in parts)
    if seconds < MIN_INTERVAL_S:
        raise ValueError(f"{text!r} is shorter than {MIN_INTERVAL_S:g}s")
    return seconds


def interval_text(seconds: float) -> str:
    """Seconds as the shortest of 45s, 10m, 1h30m, 2d."""
    seconds = int(round(seconds))
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts) or "0s"


@dataclass(kw_only=True)
class Loop:
    number: int
    every_s: float
    prompt: str
    next_at: float  # on the schedule's clock
    runs: int = 0

    @property
    def every(self) -> str:
        return interval_text(self.every_s)


class LoopSchedule:
    """The session's loops, numbered from 1 in the order they were added."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.loops: list[Loop] = []
        self._numbers = 0

    def add(self, interval: str, prompt: str) -> Loop:
        """A new loop, first due now. Raises ValueError for a bad interval or no prompt."""
        every = parse_interval(interval)
        if not prompt.strip():
            raise ValueError("a loop needs a prompt: /loop 10m is CI green yet?")
        self._numbers += 1
        loop = Loop(
            number=self._numbers, every_s=every, prompt=prompt.strip(), next_at=self.clock()
        )
        self.loops.append(loop)
        return loop

    def stop(self, number: int) -> Loop:
        """Remove loop `number`; raises KeyError when there is none."""
        for loop in self.loops:
            if loop.number == number:
                self.loops.remove(loop)
                return loop
        raise KeyError(number)

    def due(self) -> Loop | None:
        """The loop whose run is most overdue, if any is due."""
        now = self.clock()
        overdue = [loop for loop in self.loops if loop.next_at <= now]
        return min(overdue, key=lambda loop: loop.next_at, default=None)

    def ran(self, loop: Loop, started: float) -> None:
        """After a run: the next is one interval after it started, or, if that has already
        passed (a run longer than the interval), one interval from now."""
        loop.runs += 1
        now = self.clock()
        loop.next_at = started + loop.every_s
        if loop.next_at <= now:
            loop.next_at = now + loop.every_s

    def describe(self, loop: Loop) -> str:
        wait = max(0.0, loop.next_at - self.clock())
        runs = f"{loop.runs} run{'s' if loop.runs != 1 else ''}"
        return f"loop {loop.number} · every {loop.every} · next in {interval_text(wait)} · {runs}"
