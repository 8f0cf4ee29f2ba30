"""Scoring a judge's answers against the labels, and what active mode did with them.

What counts, call by call (each judge call is one verdict, whatever fired):

- a call at a step inside the labelled stuck stretch (from `first_stuck_step`
  to `stuck_until`, or to the end) should be answered "stuck"; one before it,
  after the agent recovered, or on a productive run, "not stuck";
- the answer scored is the judge's own: a "stuck" below `judge.minConfidence`
  counts as "stuck" here (it is the judge's call; the threshold is the guard's),
  though the guard carries on after it, which the end-to-end outcome shows;
- no answer (a timeout, an error, an unreadable reply) counts as "not stuck",
  as in the guard;
- trajectories whose label has low confidence are reported, never scored.

End to end, per labelled run, from the active-mode replay: a stuck run is
redirected (or stopped) "within N steps" when the guard's first redirect (or
its stop) comes at the labelled first stuck step or up to N steps after it,
inside the stretch; a redirect or stop before that step interrupted the run
before its loop began. A productive run is interrupted by any redirect or stop.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from caretz.eval.judge_eval import JudgedCall, TrajectoryRun
from caretz.eval.labels import PRODUCTIVE


@dataclass
class LabelTally:
    """How the "stuck" answers matched the labels."""

    tp: int = 0  # stuck, and should be
    fp: int = 0  # stuck, but should not be
    fn: int = 0  # not stuck, but should be
    tn: int = 0

    def add(self, expected: bool, answered: bool) -> None:
        if answered:
            self.tp, self.fp = self.tp + expected, self.fp + (not expected)
        else:
            self.fn, self.tn = self.fn + expected, self.tn + (not expected)

    @property
    def calls(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    @property
    def precision(self) -> float | None:
        return _ratio(self.tp, self.tp + self.fp)

    @property
    def recall(self) -> float | None:
        return _ratio(self.tp, self.tp + self.fn)

    @property
    def f1(self) -> float | None:
        p, r = self.precision, self.recall
        if p is None or r is None:
            return None
        return 0.0 if p + r == 0 else 2 * p * r / (p + r)

    def to_json(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "should_be_stuck": self.tp + self.fn,
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "tn": self.tn,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
        }


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


@dataclass(frozen=True)
class ScoredCall:
    trajectory: str
    kind: str
    call: JudgedCall
    expected: bool | None  # None: not scored (a low-confidence label)

    @property
    def answered(self) -> bool:
        return self.call.verdict.stuck and self.call.error is None

    @property
    def wrong(self) -> bool:
        return self.expected is not None and self.answered != self.expected


@dataclass(kw_only=True)
class ActiveModeOutcome:
    """What active mode did to one labelled run."""

    trajectory: str
    kind: str
    stuck: bool
    scored: bool
    onset: int | None
    end: int | None  # the last stuck step
    redirect: int | None
    stop: int | None

    def within(self, step: int | None, steps: int) -> bool:
        if step is None or self.onset is None or self.end is None:
            return False
        return self.onset <= step <= min(self.onset + steps, self.end)

    def in_loop(self, step: int | None) -> bool:
        if step is None or self.onset is None or self.end is None:
            return False
        return self.onset <= step <= self.end

    @property
    def before_onset(self) -> bool:
        first = min((s for s in (self.redirect, self.stop) if s is not None), default=None)
        return self.onset is not None and first is not None and first < self.onset

    @property
    def calls_after_stop(self) -> int:
        """Tool calls of the stuck stretch that a stop inside it would have saved."""
        if self.stop is None or self.end is None or not self.in_loop(self.stop):
            return 0
        return self.end - self.stop


@dataclass
class OutcomeSummary:
    within: int  # N, the steps after onset that count as "within"
    stuck: list[ActiveModeOutcome] = field(default_factory=list)
    productive: list[ActiveModeOutcome] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        stuck, n = self.stuck, self.within
        return {
            "within_steps": n,
            "stuck_runs": len(stuck),
            "redirected_within": sum(o.within(o.redirect, n) for o in stuck),
            "stopped_within": sum(o.within(o.stop, n) for o in stuck),
            "redirected_in_loop": sum(o.in_loop(o.redirect) for o in stuck),
            "stopped_in_loop": sum(o.in_loop(o.stop) for o in stuck),
            "interrupted_before_onset": sum(o.before_onset for o in stuck),
            "median_steps_to_redirect": _median(_delays(stuck, lambda o: o.redirect)),
            "median_steps_to_stop": _median(_delays(stuck, lambda o: o.stop)),
            "stuck_calls_after_stop": sum(o.calls_after_stop for o in stuck),
            "productive_runs": len(self.productive),
            "productive_interrupted": sum(
                o.redirect is not None or o.stop is not None for o in self.productive
            ),
            "productive_redirected": sum(o.redirect is not None for o in self.productive),
            "productive_stopped": sum(o.stop is not None for o in self.productive),
        }


def _delays(
    outcomes: Sequence[ActiveModeOutcome], step_of: Callable[[ActiveModeOutcome], int | None]
) -> list[int]:
    return [
        step - o.onset
        for o in outcomes
        if (step := step_of(o)) is not None and o.onset is not None and o.in_loop(step)
    ]


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


@dataclass(kw_only=True)
class CallStats:
    """Per judge call, over every call of the run (scored or not, cached or not)."""

    calls: int
    asked: int  # asked in this run; the rest came from the cache
    latency_mean_s: float | None
    latency_p95_s: float | None
    input_tokens_mean: float | None
    output_tokens_mean: float | None
    cost_mean_usd: float | None  # None: the model's price is unknown (or no calls)
    cost_total_usd: float | None
    errors: int

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def p95(values: Sequence[float]) -> float | None:
    """The nearest-rank 95th percentile: the smallest value at or above 95% of them."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[math.ceil(0.95 * len(ordered)) - 1]


def call_stats(
    calls: Sequence[JudgedCall], cost: Callable[[JudgedCall], float | None]
) -> CallStats:
    latencies = [c.latency_s for c in calls]
    costs = [cost(c) for c in calls]
    known = None if not calls or any(c is None for c in costs) else [c or 0.0 for c in costs]
    return CallStats(
        calls=len(calls),
        asked=sum(not c.cached for c in calls),
        latency_mean_s=statistics.fmean(latencies) if calls else None,
        latency_p95_s=p95(latencies),
        input_tokens_mean=statistics.fmean(c.usage.input_tokens for c in calls) if calls else None,
        output_tokens_mean=(
            statistics.fmean(c.usage.output_tokens for c in calls) if calls else None
        ),
        cost_mean_usd=statistics.fmean(known) if known else None,
        cost_total_usd=sum(known) if known else None,
        errors=sum(c.error is not None for c in calls),
    )


def scored_calls(runs: Sequence[TrajectoryRun]) -> list[ScoredCall]:
    scored = []
    for run in runs:
        label, trajectory = run.labelled.label, run.labelled.trajectory
        for call in run.calls:
            expected = None if label.low_confidence else label.expects_stuck(call.step)
            scored.append(ScoredCall(trajectory.id, label.kind, call, expected))
    return scored


def tallies(calls: Sequence[ScoredCall]) -> tuple[LabelTally, dict[str, LabelTally]]:
    """Overall, and per trajectory kind (stuck kinds by name, productive last)."""
    overall, by_kind = LabelTally(), dict[str, LabelTally]()
    for scored in calls:
        if scored.expected is None:
            continue
        overall.add(scored.expected, scored.answered)
        by_kind.setdefault(scored.kind, LabelTally()).add(scored.expected, scored.answered)
    order = sorted(by_kind, key=lambda kind: (kind == PRODUCTIVE, kind))
    return overall, {kind: by_kind[kind] for kind in order}


def outcomes(runs: Sequence[TrajectoryRun], within: int) -> OutcomeSummary:
    summary = OutcomeSummary(within)
    for run in runs:
        label, trajectory = run.labelled.label, run.labelled.trajectory
        last = len(trajectory.steps) - 1
        end = (
            (label.stuck_until if label.stuck_until is not None else last) if label.stuck else None
        )
        outcome = ActiveModeOutcome(
            trajectory=trajectory.id,
            kind=label.kind,
            stuck=label.stuck,
            scored=not label.low_confidence,
            onset=label.first_stuck_step,
            end=end,
            redirect=run.redirect_step,
            stop=run.stop_step,
        )
        if outcome.scored:
            (summary.stuck if label.stuck else summary.productive).append(outcome)
    return summary
