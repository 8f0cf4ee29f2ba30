"""The three documented triggers that ask the judge.

- repeat: the same failure fingerprint has now happened `repeatThreshold` times;
- failure-rate: at least 8 of the last 12 tool calls failed;
- check-every: `checkEvery` calls have run since the last check, failed or not.

Each keeps O(1) state per tool result. After a verdict on a repeated failure,
that failure must repeat another `repeatThreshold` times before it fires again
(also the size at which a "not stuck" verdict's hold on it ends: `guard/holds.py`);
other failures keep their counts, so a periodic check or a verdict on another
failure never delays the next one. Every verdict, whatever asked, restarts the
other two: the judge has just seen the last 12 calls (the failure-rate window)
and the turn as it is (any judge call is a check). While the run looks flat
(`guard/stagnation.py`) the periodic check comes after `stagnation.checkEvery`
calls instead of `checkEvery`.
"""

from __future__ import annotations

from collections import deque

from caretz.guard.config import LoopGuardConfig
from caretz.guard.counting import Tally
from caretz.guard.detector import Detector
from caretz.guard.model import Firing, ToolObservation, TurnContext, Verdict
from caretz.guard.normalize import failure_fingerprint
from caretz.guard.stagnation import Stagnation
from caretz.messages import Message

FAILURE_RATE_FAILED = 8
FAILURE_RATE_WINDOW = 12


def is_failure(obs: ToolObservation) -> bool:
    """A call failed when it says so (a Bash command: non-zero exit); unknown is not."""
    return obs.failed is True


class RepeatTrigger(Detector):
    """The same failure, after normalizing, `threshold` times since the last check."""

    name = "repeat"

    def __init__(self, threshold: int = 3):
        if threshold < 1:
            raise ValueError("loopGuard.repeatThreshold must be at least 1")
        self.threshold = threshold
        self._failures = Tally()

    def begin_turn(self, ctx: TurnContext) -> None:
        self._failures.restart()

    def after_tool(self, obs: ToolObservation) -> Firing | None:
        if not is_failure(obs):
            return None
        fingerprint = failure_fingerprint(obs)
        count = self._failures.add(fingerprint)
        if not count.reached(self.threshold):
            return None
        times = count.since
        # Fired: this failure must come back another `threshold` times to fire again.
        count.restart()
        return Firing(
            detector=self.name,
            fingerprint=fingerprint,
            headline=f"repeat: {times}× {fingerprint}",
            step=obs.index,
            count=times,
            failure=fingerprint,
            size=count.value,
            # As documented: after "not stuck" it asks again after another threshold.
            hold_until=count.value + self.threshold,
        )

    def after_verdict(self, firing: Firing, verdict: Verdict) -> None:
        # Only a verdict on a failure restarts its count (a repeated-error firing
        # names the same failure): a periodic check, or a verdict on another
        # failure, leaves the count of this one where it was.
        if firing.failure:
            self._failures.restart_key(firing.failure)


class FailureRateTrigger(Detector):
    """At least `failed` of the last `window` calls failed."""

    name = "failure-rate"

    def __init__(self, failed: int = FAILURE_RATE_FAILED, window: int = FAILURE_RATE_WINDOW):
        self.failed = failed
        self.window = window
        self._outcomes: deque[bool] = deque(maxlen=window)
        self._failures = 0

    def begin_turn(self, ctx: TurnContext) -> None:
        self._restart()

    def after_tool(self, obs: ToolObservation) -> Firing | None:
        if len(self._outcomes) == self.window and self._outcomes[0]:
            self._failures -= 1
        failed = is_failure(obs)
        self._outcomes.append(failed)
        self._failures += failed
        if self._failures < self.failed:
            return None
        calls = len(self._outcomes)
        failures = self._failures
        # Fired: only calls made after this one count towards the next firing.
        self._restart()
        return Firing(
            detector=self.name,
            fingerprint=f"{failures} of {calls}",
            headline=f"failure-rate: {failures} of the last {calls} calls failed",
            step=obs.index,
            count=failures,
            out_of=calls,
        )

    def after_verdict(self, firing: Firing, verdict: Verdict) -> None:
        # Any verdict: the judge's summary lists the last 12 calls, this check's
        # whole window, so only failures after it count towards the next firing.
        self._restart()

    def _restart(self) -> None:
        self._outcomes.clear()
        self._failures = 0


class CheckEveryTrigger(Detector):
    """`every` calls since the last check, failed or not; any judge call is a check.

    With a `stagnation` signal, the check comes after `stagnation.window` calls
    instead while the run looks flat (no task file changed, almost nothing new).
    It is the guard's clock, not a pattern: a verdict never holds it."""

    name = "check-every"

    def __init__(self, every: int = 20, stagnation: Stagnation | None = None):
        self.every = every
        self.stagnation = stagnation if every > 0 else None
        self._since_check = 0

    def begin_turn(self, ctx: TurnContext) -> None:
        self._since_check = 0
        if self.stagnation is not None:
            self.stagnation.begin_turn()

    def after_response(self, message: Message) -> Firing | None:
        if self.stagnation is not None:
            self.stagnation.observe_response(message)
        return None

    def after_tool(self, obs: ToolObservation) -> Firing | None:
        if self.every <= 0:
            return None
        self._since_check += 1
        flat = self._flat(obs)
        if self._since_check < self.every and not flat:
            return None
        calls = self._since_check
        self._since_check = 0
        return Firing(
            detector=self.name,
            fingerprint=f"{calls} calls" + (FLAT if flat else ""),
            headline=f"check-every: {calls} calls since the last check"
            + (self._flat_note() if flat else ""),
            step=obs.index,
            message=flat_sentence(self.stagnation.window) if flat and self.stagnation else "",
            count=calls,
            holdable=False,
        )

    def _flat(self, obs: ToolObservation) -> bool:
        """Whether the run looks flat, and the check is due sooner for it."""
        signal = self.stagnation
        if signal is None:
            return False
        signal.observe(obs)
        return signal.window <= self._since_check < self.every and signal.flat()

    def _flat_note(self) -> str:
        signal = self.stagnation
        assert signal is not None
        return (
            f" (sooner: the run looks flat, {signal.new_in_window()} of the last "
            f"{signal.window} calls returned anything new, none changed a task file)"
        )

    def after_verdict(self, firing: Firing, verdict: Verdict) -> None:
        self._since_check = 0


FLAT = ", flat"


def flat_sentence(calls: int) -> str:
    """What the note says fired, for a check the stagnation signal brought forward."""
    return (
        f"A routine check, brought forward because the last {calls} tool calls changed no "
        "task file and returned almost nothing new, found the turn going in circles or "
        "drifting from the task."
    )


def build_triggers(config: LoopGuardConfig) -> list[Detector]:
    """The documented triggers, in the order the guard prefers when several fire."""
    triggers: list[Detector] = [RepeatTrigger(config.repeat_threshold), FailureRateTrigger()]
    if config.check_every > 0:
        flat = config.stagnation
        signal = Stagnation(flat.check_every) if flat.enabled else None
        triggers.append(CheckEveryTrigger(config.check_every, signal))
    return triggers
