"""Peer-style checks on the tool calls: the same call again, the same error
again, and calls cycling through the same steps with the same results.
"""

from __future__ import annotations

from collections import Counter, deque

from caretz.guard.counting import Count, Streak
from caretz.guard.detector import Detector, Severity, fire
from caretz.guard.detectors_config import (
    AlternationConfig,
    IdenticalCallConfig,
    RepeatedErrorConfig,
)
from caretz.guard.model import Firing, ToolObservation, TurnContext, Verdict
from caretz.guard.normalize import (
    call_signature,
    error_line,
    failure_fingerprint,
    normalize_output,
)
from caretz.text import one_line


def _result_key(obs: ToolObservation) -> str:
    status = {True: "failed", False: "ok", None: "?"}[obs.failed]
    return f"{status}\x00{normalize_output(obs.output)}"


def _error_text(output: str) -> str:
    """The line of a failed result that names the error, normalized, for headlines."""
    return normalize_output(error_line(output)) or "(no output)"


class IdenticalCallDetector(Detector):
    """The same call (and, by default, the same result) again and again.

    caveman's retry-loop breaker stops a streak of identical calls, the anti-looping
    guardrail counts "3+ in 5 turns", Goa warns and interrupts streaks and counts
    totals; here the streak asks the judge first, its stop level asks it again,
    and only without a judge does the stop level act alone.

    A "not stuck" verdict holds the call and its result (a poll that keeps saying
    "pending"), as the guard holds every pattern (`guard/holds.py`): its size is
    the occurrences since the call's result last changed, and a streak judged at
    the judge level is held at least until the stop level, so a poll asks again at
    `interruptStreak`, then each time it doubles. A new result is a new pattern.
    """

    name = "identical-call"

    def __init__(self, config: IdenticalCallConfig):
        self.config = config
        self._reset_turn()

    def _reset_turn(self) -> None:
        self._last_key: str | None = None
        self._streak = 0
        self._warn_base = 0  # streak length when the judge level last fired
        self._stop_base = 0
        self._recent: deque[str] = deque(maxlen=max(self.config.window, 1))
        # Identical calls since counting last restarted (a verdict, a changed result).
        self._since: Counter[str] = Counter()
        self._last_result: dict[str, str] = {}  # signature → its latest result
        self._occurrences: Counter[str] = Counter()  # key → calls since its result changed
        # Cycles judged "not stuck" (their keys joined), by the calls they are made of,
        # and the last calls, as long as the longest of them.
        self._held_cycles: dict[str, set[str]] = {}
        self._last_keys: deque[str] = deque(maxlen=2)

    def begin_turn(self, ctx: TurnContext) -> None:
        self._reset_turn()

    def after_verdict(self, firing: Firing, verdict: Verdict) -> None:
        if firing.detector != self.name:
            return  # a verdict on something else: the identical calls keep their counts
        key = firing.pattern
        # Only the call judged counts again from here; other calls keep their counts.
        if key == self._last_key:
            self._warn_base = self._streak
        self._restart(key)

    def hold(self, firing: Firing) -> None:
        if firing.detector == AlternationDetector.name and self.config.same_result_only:
            # A cycle judged "not stuck" (a poll and its sleep): while it replays, its
            # calls are the alternation check's to ask about again (and its hold).
            keys = firing.pattern.split(CYCLE_SEPARATOR)
            for key in keys:
                self._held_cycles.setdefault(key, set()).add(firing.pattern)
            if len(keys) > (self._last_keys.maxlen or 0):
                self._last_keys = deque(self._last_keys, maxlen=len(keys))

    def after_tool(self, obs: ToolObservation) -> Firing | None:
        signature = call_signature(obs.tool, obs.args)
        key = signature
        if self.config.same_result_only:
            result = _result_key(obs)
            key += "\x00" + result
            previous = self._last_result.setdefault(signature, result)
            if previous != result:
                # A call now returns something new (a poll moved on): the world changed,
                # so repeats spread out before it are no evidence of a loop, and what
                # the judge held about the old result no longer applies.
                self._recent.clear()
                self._since = Counter()
                old = signature + "\x00" + previous
                self._occurrences.pop(old, None)
                self._held_cycles.pop(old, None)
            self._last_result[signature] = result
        if key == self._last_key:
            self._streak += 1
        else:
            self._last_key, self._streak, self._warn_base, self._stop_base = key, 1, 0, 0
        self._recent.append(key)
        self._last_keys.append(key)
        self._since[key] += 1
        self._occurrences[key] += 1
        firing = self._check(key, signature, obs.index, self._cycling(key))
        if firing is not None:
            self._fired(key, firing.severity)
        return firing

    def _cycling(self, key: str) -> bool:
        """The call is replaying, right now, a cycle judged "not stuck": the calls up
        to it are that cycle. Between other calls it is a spread-out repeat again."""
        for cycle in self._held_cycles.get(key, ()):
            period = cycle.count(CYCLE_SEPARATOR) + 1
            last = list(self._last_keys)[-period:]
            if len(last) == period and _cycle_key(last) == cycle:
                return True
        return False

    def _check(self, key: str, signature: str, step: int, cycling: bool) -> Firing | None:
        c = self.config
        streak = self._streak
        if c.interrupt_streak and streak - self._stop_base >= c.interrupt_streak:
            return self._make(key, signature, streak, "stop", step, "in a row")
        if c.warn_streak and streak - self._warn_base >= c.warn_streak:
            # Judged "not stuck", the streak asks again at the stop level at the soonest.
            until = max(2 * self._occurrences[key], c.interrupt_streak)
            return self._make(key, signature, streak, "judge", step, "in a row", until)
        # Spread-out repeats only: a run in a row is the streak levels' business.
        if streak > 1 or cycling:
            return None
        in_window = self._recent.count(key)
        if c.window and c.max_in_window and in_window >= c.max_in_window:
            where = f"in the last {c.window} calls"
            return self._make(key, signature, in_window, "judge", step, where)
        total = self._since[key]
        if c.max_total and total >= c.max_total:
            return self._make(key, signature, total, "judge", step, "this turn")
        return None

    def _fired(self, key: str, severity: str) -> None:
        if severity == "stop":
            self._stop_base = self._streak
        self._warn_base = self._streak
        self._restart(key)

    def _restart(self, key: str) -> None:
        """This call's spread-out repeats count again from here; other calls keep theirs."""
        self._recent = deque((k for k in self._recent if k != key), maxlen=self._recent.maxlen)
        self._since[key] = 0

    def _make(
        self,
        key: str,
        signature: str,
        count: int,
        severity: Severity,
        step: int,
        where: str,
        hold_until: int = 0,
    ) -> Firing:
        same = " with the same result" if self.config.same_result_only else ""
        message = (
            f"The call {one_line(signature, 200)} has run {count} times {where}{same}. "
            "Repeating it will not change anything: use what it returned, or change approach."
        )
        what = f"{count}× {signature}"
        return fire(self.name, signature, what, severity, step, message, count=count,
                    pattern=key, size=self._occurrences[key],
                    hold_until=hold_until)  # fmt: skip


# ---------------------------------------------------------------- repeated error


class RepeatedErrorDetector(Detector):
    """The identical error on consecutive failed calls; a failed edit re-applied.

    As the anti-looping guardrail's "identical error message twice consecutively"
    and "file edit made twice with same error", at thresholds of its own.
    """

    name = "repeated-error"

    def __init__(self, config: RepeatedErrorConfig):
        self.config = config
        self._reset_turn()

    def _reset_turn(self) -> None:
        self._errors = Streak()  # failed calls in a row with one fingerprint
        self._edits: dict[str, Streak] = {}  # edit signature → its results, in a row

    def begin_turn(self, ctx: TurnContext) -> None:
        self._reset_turn()

    def after_verdict(self, firing: Firing, verdict: Verdict) -> None:
        # A verdict on this run of one failure (asked by this check, or by the repeat
        # trigger on the same failure) restarts it; a verdict on a re-applied edit
        # restarts that edit. Other edits and failures keep their counts.
        if firing.failure and firing.failure == self._errors.key:
            self._errors.count.restart()
        edit = self._edits.get(firing.pattern) if firing.detector == self.name else None
        if edit is not None:
            edit.count.restart()

    def after_tool(self, obs: ToolObservation) -> Firing | None:
        if obs.failed is not True:  # a success (or an unknown outcome) ends the run
            self._errors.clear()
            return None
        run = self._errors.add(failure_fingerprint(obs))
        signature = call_signature(obs.tool, obs.args)
        edit = self._count_edit(obs.tool, signature, normalize_output(obs.output))
        fired = self._check_run(obs, run.value) or self._check_edit(obs, signature, edit)
        if fired is not None:
            run.restart()
            if edit is not None:
                edit.restart()
        return fired

    def _count_edit(self, tool: str, signature: str, error: str) -> Count | None:
        """How often this edit has now failed with this same result, in a row."""
        if tool not in self.config.edit_tools:
            return None
        return self._edits.setdefault(signature, Streak()).add(error)

    def _check_run(self, obs: ToolObservation, times: int) -> Firing | None:
        if not self._errors.count.reached(self.config.consecutive):
            return None
        error = _error_text(obs.output)
        return fire(
            self.name,
            f"{obs.tool}: {error}",
            f"{times}× in a row {obs.tool}: {error}",
            step=obs.index,
            message=f"The last {times} calls failed with the same error: {one_line(error, 200)}",
            failure=str(self._errors.key),
            size=times,
        )

    def _check_edit(
        self, obs: ToolObservation, signature: str, edit: Count | None
    ) -> Firing | None:
        if edit is None or not edit.reached(self.config.same_edit):
            return None
        error = _error_text(obs.output)
        return fire(
            self.name,
            f"{signature}: {error}",
            f"same edit failed {edit.value}× {obs.tool}: {error}",
            step=obs.index,
            message=(
                f"The same edit has now failed {edit.value} times with the same error: "
                f"{one_line(error, 200)}. Applying it again will fail again."
            ),
            failure=str(self._errors.key),
            pattern=signature,
            size=edit.value,
        )


class AlternationDetector(Detector):
    """A,B,A,B… and short cycles replayed with the same results at every position.

    A "not stuck" verdict holds the cycle (a poll and its `sleep`), as the guard
    holds every pattern (`guard/holds.py`): its size is the rounds it has played,
    so it asks again only once the cycle has replayed as many more rounds as it had.
    """

    name = "alternation"

    def __init__(self, config: AlternationConfig):
        self.config = config
        self._reset_turn()

    def _reset_turn(self) -> None:
        periods = range(2, self.config.max_period + 1)
        self._keys: deque[str] = deque(maxlen=self.config.max_period + 1)
        self._signatures: deque[str] = deque(maxlen=self.config.max_period)
        # For each period p: how many calls in a row equal the call p places earlier.
        self._matched: dict[int, int] = dict.fromkeys(periods, 0)
        self._running: dict[int, tuple[str, int]] = {}  # period → its cycle, rounds so far
        self._asked: dict[str, int] = {}  # cycle → its rounds when the judge last answered
        self._played: Counter[str] = Counter()  # cycle → rounds of its earlier replays

    def begin_turn(self, ctx: TurnContext) -> None:
        self._reset_turn()

    def after_verdict(self, firing: Firing, verdict: Verdict) -> None:
        # A verdict on a cycle restarts its count: it asks again after another
        # `repeats - 1` rounds (and, held, once it has doubled). Other cycles keep theirs.
        if firing.detector != self.name:
            return
        for pattern, rounds in self._running.values():
            if pattern == firing.pattern:
                self._asked[pattern] = rounds

    def after_tool(self, obs: ToolObservation) -> Firing | None:
        signature = call_signature(obs.tool, obs.args)
        self._keys.append(signature + "\x00" + _result_key(obs))
        self._signatures.append(signature)
        keys = self._keys
        for period in self._matched:
            same = len(keys) > period and keys[-1] == keys[-1 - period]
            self._matched[period] = self._matched[period] + 1 if same else 0
            if not same:
                self._end_replay(period)
        if not self.config.repeats:
            return None
        for period, matched in self._matched.items():
            cycle = list(keys)[-period:]
            if matched >= period * (self.config.repeats - 1) and len(set(cycle)) > 1:
                return self._replaying(period, _cycle_key(cycle), matched // period + 1, obs)
        return None

    def _replaying(
        self, period: int, pattern: str, rounds: int, obs: ToolObservation
    ) -> Firing | None:
        """The shortest cycle replaying: it fires once it has played `repeats` rounds,
        and again every further `repeats - 1` after the judge answered about it."""
        self._running[period] = (pattern, rounds)
        asked = self._asked.get(pattern)
        if asked is not None and rounds - asked < self.config.repeats - 1:
            return None
        return self._make(period, obs.index, pattern, self._played[pattern] + rounds)

    def _end_replay(self, period: int) -> None:
        ended = self._running.pop(period, None)
        if ended is not None:
            pattern, rounds = ended
            self._played[pattern] += rounds
            self._asked.pop(pattern, None)

    def _make(self, period: int, step: int, pattern: str, size: int) -> Firing:
        calls = list(self._signatures)[-period:]
        cycle = " → ".join(one_line(call, 60) for call in calls)
        times = self.config.repeats
        return fire(
            self.name,
            " → ".join(calls),
            f"{period}-call cycle ×{times}: {cycle}",
            step=step,
            message=(
                f"The same {period} calls have repeated {times} times, each with the same "
                f"results as before: {cycle}. Nothing changes between the rounds."
            ),
            count=times,
            pattern=pattern,
            size=size,
        )


CYCLE_SEPARATOR = "\x01"


def _cycle_key(cycle: list[str]) -> str:
    """A cycle named the same whichever of its calls it is seen to start with; its
    parts are the calls' keys (signature and result), as identical-call keys them."""
    rotations = [CYCLE_SEPARATOR.join(cycle[i:] + cycle[:i]) for i in range(len(cycle))]
    return min(rotations)
