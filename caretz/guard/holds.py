"""What a "not stuck" verdict holds, and when the hold expires: one rule for every check.

A judge that really answers "not stuck" about a firing (not a timeout or an
error) holds the firing's pattern: the same check firing on the same pattern
again does not ask until the pattern has doubled since the verdict, or until
`cap` calls have run since it, whichever comes first. Then the judge is asked
again, and a "not stuck" answer holds it anew from there: a cycle asked about
after 3 rounds asks again after 6, 12, 24, and at the latest once 40 calls (by
default) have passed since the last answer.

A pattern is the check's name plus `Firing.pattern` (its `fingerprint` when that
is empty); its size is `Firing.size` (occurrences, rounds, the length of a
stretch), or, when a check reports none, how often it has fired on that pattern
this turn. So a check gets the rule without code of its own: a new check whose
firings repeat one fingerprint asks after its 1st, 2nd, 4th, 8th … firing. A
check may name the size at which its hold ends instead (`Firing.hold_until`):
`repeat` asks again after another `repeatThreshold`, as the loop guard documents;
identical-call's streak not before its stop level.

A hold is about one pattern only: it never changes what another pattern or
another check counts. The periodic check (`Firing.holdable` false) is never held:
it is the guard's clock, not a pattern. Firings that do not ask the judge
(warnings, blocks, stops that act at once) pass untouched.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from caretz.guard.model import Firing

HOLD_CAP_CALLS = 40  # when the periodic check is off: at most this many calls


@dataclass(frozen=True)
class Hold:
    size: int  # the pattern's size when the judge answered
    until: int  # the size at which it asks again
    call: int  # calls made in the turn when the judge answered


def hold_cap(check_every: int) -> int:
    """Calls after which any hold expires: twice the periodic check's interval."""
    return 2 * check_every if check_every > 0 else HOLD_CAP_CALLS


def asks_judge(firing: Firing) -> bool:
    """A firing that would ask the judge: a judge level, or a stop level that waits
    for a "stuck" verdict."""
    return firing.severity == "judge" or (firing.severity == "stop" and not firing.immediate)


class VerdictHolds:
    """The holds of one turn: `admits` each firing, `hold` what a verdict called fine."""

    def __init__(self, cap: int = HOLD_CAP_CALLS):
        self.cap = cap
        self._holds: dict[tuple[str, str], Hold] = {}
        self._fired: Counter[tuple[str, str]] = Counter()

    def begin_turn(self) -> None:
        self._holds.clear()
        self._fired.clear()

    def admits(self, firing: Firing, calls: int) -> bool:
        """Whether `firing` goes on to the judge; a held pattern waits until it has
        doubled or the cap has passed, and then its hold is gone."""
        if not asks_judge(firing) or not firing.holdable:
            return True
        key = _key(firing)
        self._fired[key] += 1
        hold = self._holds.get(key)
        if hold is None:
            return True
        if self._size(firing, key) >= hold.until or calls - hold.call >= self.cap:
            del self._holds[key]
            return True
        return False

    def hold(self, firing: Firing, calls: int) -> None:
        """The judge called `firing`'s pattern fine: hold it."""
        if not asks_judge(firing) or not firing.holdable:
            return
        key = _key(firing)
        size = self._size(firing, key)
        self._holds[key] = Hold(size, firing.hold_until or 2 * size, calls)

    def _size(self, firing: Firing, key: tuple[str, str]) -> int:
        return firing.size or max(self._fired[key], 1)


def _key(firing: Firing) -> tuple[str, str]:
    return firing.detector, firing.pattern or firing.fingerprint
