"""Asking the judge about what fired, and logging its verdict with what follows.

One judge call answers every firing of one event. A timeout, an error or an
unreadable reply counts as "not stuck", and so does a "stuck" the judge itself
is unsure of (below `judge.minConfidence`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from caretz.guard.config import LoopGuardConfig
from caretz.guard.model import Firing, Judge, JudgeResult, Mode, Verdict, not_stuck
from caretz.guard.notes import redirect_note
from caretz.guard.record import TurnRecord
from caretz.guard.summary import build_summary
from caretz.session.records.base import Record
from caretz.session.records.guard import LoopGuardJudged, LoopGuardJudging

Emit = Callable[[Record], Any]

# After this many judge calls in a row without an answer (timeouts, errors,
# unreadable replies) the judge counts as unreachable: the stop levels of the
# deterministic checks then act on their own, until the judge answers again.
UNREACHABLE_AFTER = 2


@dataclass(frozen=True)
class Judgement:
    action: str  # "continue", "redirect" or "stop": what active mode does
    note: str | None  # the redirect note, when the action is "redirect"
    acted_on: Verdict  # the verdict as the checks are told it ("not stuck" when unsure)
    answered: bool = True  # a real answer, not a timeout, an error or an unreadable reply


class JudgeCaller:
    """Calls the judge for the guard, within `judgeTimeout`, and emits Judging and Judged."""

    def __init__(
        self, judge: Judge, config: LoopGuardConfig, clock: Callable[[], float], emit: Emit
    ):
        self.judge = judge
        self.config = config
        self._clock = clock
        self._emit = emit
        # A stand-in (offline replay) answers "not stuck" as a judge would.
        self._stand_in = bool(getattr(judge, "stands_in", False))
        self.unanswered_in_a_row = 0
        self.last_error: str | None = None

    @property
    def reachable(self) -> bool:
        """Whether a judge can be expected to answer (it has not failed repeatedly)."""
        return self.unanswered_in_a_row < UNREACHABLE_AFTER

    def ask(
        self,
        judged: list[Firing],
        record: TurnRecord,
        *,
        mode: Mode,
        redirect_used: bool,
        final: bool,
    ) -> Judgement:
        """Ask about `judged` (one call); `final`: the turn has ended, so stuck means stop."""
        primary = judged[0]
        self._emit(
            LoopGuardJudging(
                trigger=primary.detector,
                headline=primary.headline,
                step=primary.step,
                also=[f.headline for f in judged[1:]],
            )
        )
        summary = build_summary(record, judged)
        result = self._call(summary)
        verdict = result.verdict if result.error is None else not_stuck(result.verdict.confidence)
        answered = result.error is None or self._stand_in
        if answered:
            self.unanswered_in_a_row, self.last_error = 0, None
        else:
            self.unanswered_in_a_row += 1
            self.last_error = result.error
        record.add_verdict(primary.step, primary.headline, verdict, result.error)
        unsure = verdict.stuck and verdict.confidence < self.config.judge.min_confidence
        acted_on = not_stuck(verdict.confidence) if unsure else verdict
        if not acted_on.stuck:
            action = "continue"
        elif final or redirect_used:
            action = "stop"
        else:
            action = "redirect"
        note = redirect_note(record.ctx.task, primary, verdict) if action == "redirect" else None
        self._emit(
            LoopGuardJudged(
                **_judged_fields(judged, summary, result, verdict),
                mode=mode,
                action=action,
                applied=mode == "active" and action != "continue",
                note=note,
                unsure=unsure,
            )
        )
        return Judgement(action, note, acted_on, answered)

    def _call(self, summary: str) -> JudgeResult:
        started = self._clock()
        try:
            return self.judge(summary, self.config.judge_timeout_s)
        except Exception as error:  # a judge that raises counts as "not stuck", like an error
            judge = self.judge
            model = str(getattr(judge, "model_ref", getattr(judge, "model", "?")))
            return JudgeResult.no_verdict(model, self._clock() - started, f"error: {error}")


def _judged_fields(
    judged: list[Firing], summary: str, result: JudgeResult, verdict: Verdict
) -> dict[str, Any]:
    """What a LoopGuard.Judged event records of the call: what asked, what it saw, the answer."""
    primary = judged[0]
    return {
        "trigger": primary.detector,
        "headline": primary.headline,
        "triggers": [f.headline for f in judged],
        "step": primary.step,
        "summary": summary,
        "verdict": verdict.to_dict(),
        "model": result.model,
        "latency_s": round(result.latency_s, 3),
        "usage": result.usage.to_dict(),
        "error": result.error,
    }
