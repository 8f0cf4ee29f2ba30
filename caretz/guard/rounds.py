"""Rounds that end in the same failure, whatever commands each round used.

An agent going round in a slow cycle (re-run, edit, view, re-run with other
flags) may never repeat one call, and its failures may look different to the
`repeat` trigger because each command shows them its own way (a single test, a
whole file, a reproduction script). A round is the stretch of calls up to a
failure; its fingerprint is that failure's core (`normalize.failure_core`):
the telling line without the tool's name or a test id. Back-to-back failures
with one core are one round (the `repeat` and `repeatedError` checks count
those); a round needs a call in between that did not fail that way.
"""

from __future__ import annotations

from caretz.guard.counting import Tally
from caretz.guard.detector import Detector, fire
from caretz.guard.detectors_config import RoundsConfig
from caretz.guard.model import Firing, ToolObservation, TurnContext, Verdict
from caretz.guard.normalize import failure_core, failure_fingerprint
from caretz.text import one_line


class RoundsDetector(Detector):
    """`threshold` rounds ended in the same failure: ask the judge."""

    name = "rounds"

    def __init__(self, config: RoundsConfig):
        self.config = config
        self._reset_turn()

    def _reset_turn(self) -> None:
        self._rounds = Tally()
        self._last_core = ""  # the core of the previous call's failure, "" after a success
        self._cores: dict[str, str] = {}  # failure fingerprint → its core, for verdicts

    def begin_turn(self, ctx: TurnContext) -> None:
        self._reset_turn()

    def after_tool(self, obs: ToolObservation) -> Firing | None:
        if obs.failed is not True:
            self._last_core = ""
            return None
        core = failure_core(obs)
        previous, self._last_core = self._last_core, core
        if not core or core == previous:
            return None  # no failure text, or the same round going on
        fingerprint = failure_fingerprint(obs)
        self._cores[fingerprint] = core
        count = self._rounds.add(core)
        if not count.reached(self.config.threshold):
            return None
        rounds = count.since
        count.restart()
        return fire(
            self.name,
            core,
            f"{rounds} rounds ended in the same failure: {core}",
            step=obs.index,
            message=(
                f"{rounds} rounds of calls have ended in the same failure, whatever the "
                f"commands: {one_line(core, 200)}"
            ),
            failure=fingerprint,
            count=rounds,
            size=count.value,
        )

    def after_verdict(self, firing: Firing, verdict: Verdict) -> None:
        # A verdict on this failure (asked by this check, or by `repeat` on one of
        # the fingerprints it showed up as) restarts its rounds.
        core = firing.fingerprint if firing.detector == self.name else None
        if core is None and firing.failure:
            core = self._cores.get(firing.failure)
        if core:
            self._rounds.restart_key(core)
