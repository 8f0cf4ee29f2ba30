"""LoopGuard: the loop guard behind the `Guard` seam.

The turn loop hands over plain events (a call about to run, a tool result, a
streamed delta, a finished response, the end of the turn) and acts on the
decision that comes back. Cheap checks (the triggers and the peer detectors) run
on every event; when one fires at "judge" level the judge model is asked, once
per event at most.

Every decision is first made as if the guard were active: the first stuck
verdict of a turn redirects the agent with one note and a later one ends the
turn. A stop needs a "stuck" verdict: a deterministic check's stop level asks
the judge like any trigger, and acts on its own only when no judge can answer
(it failed repeatedly). Only a stream that loops (it cannot wait for a judge)
and a hard cap the user set (`immediate` firings) act at once. `_apply` then applies the mode, in one place: active mode acts and says
so with an event; shadow mode has judged, logged and emitted everything, and
the agent sees no difference.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from caretz.guard.config import LoopGuardConfig
from caretz.guard.detector import Detector
from caretz.guard.detectors import DelegationChain, build_detectors
from caretz.guard.holds import VerdictHolds, hold_cap
from caretz.guard.judging import JudgeCaller, Judgement
from caretz.guard.model import Firing, Judge, Mode, ToolObservation, TurnContext
from caretz.guard.notes import (
    block_reason,
    end_turn_notice,
    redirect_note,
    stop_instruction,
    stop_notice,
    warn_message,
)
from caretz.guard.record import TurnRecord
from caretz.guard.seam import (
    CONTINUE,
    AutoResume,
    Block,
    Continue,
    Cut,
    Decision,
    Redirect,
    Stop,
    Warn,
)
from caretz.guard.triggers import build_triggers
from caretz.messages import Message, ToolCall, Usage
from caretz.session.records import guard as records
from caretz.session.records.base import Record

Emit = Callable[[Record], Any]
D = TypeVar("D", bound=Decision)

# When several checks fire on one streamed delta, the one that acts names the cut.
_SEVERITY_ORDER = {"stop": 0, "judge": 1, "warn": 2, "block": 3}


def default_detectors(config: LoopGuardConfig, delegation: DelegationChain) -> list[Detector]:
    """The documented triggers, then the enabled peer detectors."""
    return [*build_triggers(config), *build_detectors(config.detectors, delegation)]


class LoopGuard:
    """Watches one agent's turns; see the module docstring for what it decides."""

    def __init__(
        self,
        config: LoopGuardConfig,
        judge: Judge,
        emit: Emit,
        clock: Callable[[], float] = time.monotonic,
        detectors: list[Detector] | None = None,
        delegation: DelegationChain | None = None,
    ):
        self.config = config
        self.mode: Mode = config.mode  # settable at run time (/loop-guard shadow)
        self._judge = JudgeCaller(judge, config, clock, emit)
        self._emit = emit
        self._clock = clock
        # Who delegated to whom: shared with the guards of this session's subagents.
        self.delegation = delegation if delegation is not None else DelegationChain()
        if detectors is None:
            detectors = default_detectors(config, self.delegation)
        self._detectors = detectors
        # What "not stuck" verdicts hold, for every check alike (guard/holds.py).
        self._holds = VerdictHolds(hold_cap(config.check_every))
        self._record: TurnRecord | None = None
        self._guarded = True
        self._inactive_reported: set[str] = set()
        self._resumes = 0  # automatic resumes in a row
        self._redirected = False
        self._start_turn_state()

    def _start_turn_state(self, continuation: bool = False) -> None:
        # A redirect was decided this turn (applied or not). A continuation turn
        # (a goal's next turn) keeps it: one note for the whole piece of work.
        self._redirected = continuation and self._redirected
        self._stopped = False  # the guard ended this turn (active mode)
        self._raised_before_call: list[Firing] = []  # decided with the call's result

    @property
    def stopped(self) -> bool:
        """The guard ended this turn."""
        return self._stopped

    @property
    def record(self) -> TurnRecord | None:
        """What the guard has recorded of the current turn (what the judge's summary shows)."""
        return self._record

    def for_subagent(self) -> LoopGuard:
        """The guard a subagent inherits: same settings, judge, mode and delegation chain."""
        child = LoopGuard(
            self.config, self._judge.judge, self._emit, self._clock, delegation=self.delegation
        )
        child.mode = self.mode
        return child

    # -- turn boundaries -----------------------------------------------------------------
    def begin_turn(self, ctx: TurnContext) -> None:
        self._start_turn_state(ctx.continuation)
        if ctx.from_user:
            self._resumes = 0
        self._record = TurnRecord.start(ctx, self._clock)
        self._holds.begin_turn()
        self._guarded = self.config.guards_model(ctx.model_ref)
        for detector in self._detectors:
            detector.begin_turn(ctx)
        if not self._guarded and self.mode != "off":
            self._report_inactive(ctx.model_ref)

    def _report_inactive(self, model_ref: str) -> None:
        if model_ref in self._inactive_reported:
            return
        self._inactive_reported.add(model_ref)
        self._emit(records.LoopGuardInactive(model_ref=model_ref, models=self.config.models or []))

    def end_turn(self, final_text: str) -> Continue | Stop:
        """Cross-turn checks; Stop means: do not continue automatically."""
        record = self._record
        if not self._watching() or record is None:
            return CONTINUE
        progress = record.successes > 0
        firings = self._fired(d.end_turn(final_text, progress) for d in self._detectors)
        stop = next((f for f in firings if self._acts_alone(f)), None)
        alone = stop is not None and not stop.immediate  # no judge could be asked
        judged = self._to_judge(firings)
        verdict = False
        if stop is None and judged:
            judgement = self._ask_judge(judged, final=True)
            if judgement.action != "continue":
                stop, verdict = judged[0], True
            elif self._judge_missing(judged, judgement):
                stop, alone = self._stop_levels(judged)[0], True
        if stop is None:
            return CONTINUE
        notice = end_turn_notice(stop, no_judge=self._no_judge_reason() if alone else None)
        return self._apply(Stop(notice), stop, judged=verdict)

    # -- events from the turn loop -----------------------------------------------------
    def before_tool(self, call: ToolCall) -> Continue | Block:
        if not self._watching() or self._record is None:
            return CONTINUE
        index = self._record.calls
        firings = self._fired(d.before_tool(call, index) for d in self._detectors)
        blocks = [f for f in firings if f.severity == "block"]
        # Anything else raised here is decided with the call's result.
        self._raised_before_call.extend(f for f in firings if f.severity != "block")
        if not blocks:
            return CONTINUE
        return self._apply(Block(block_reason(blocks[0])), blocks[0], tool=call.name)

    def after_tool(self, obs: ToolObservation) -> Decision:
        if not self._watching() or self._record is None:
            return CONTINUE
        self._record.add_call(obs)
        firings = self._fired(d.after_tool(obs) for d in self._detectors)
        raised, self._raised_before_call = self._raised_before_call, []
        return self._respond(raised + firings)

    def on_text(self, text: str) -> Continue | Warn | Cut:
        if self._writing_report():
            return self._cut_report([d.on_text(text) for d in self._detectors])
        if not self._watching():
            return CONTINUE
        firings = self._fired((d.on_text(text) for d in self._detectors), stream=True)
        return self._respond_in_stream(firings)

    def on_thinking(self, text: str) -> Continue | Warn | Cut:
        now = self._clock()
        if self._writing_report():
            return self._cut_report([d.on_thinking(text, now) for d in self._detectors])
        if not self._watching():
            return CONTINUE
        firings = self._fired((d.on_thinking(text, now) for d in self._detectors), stream=True)
        return self._respond_in_stream(firings)

    def after_response(self, message: Message, usage: Usage) -> Decision:
        if not self._watching() or self._record is None:
            return CONTINUE
        self._record.add_response(message, usage)
        return self._respond(self._fired(d.after_response(message) for d in self._detectors))

    # -- deciding, as if active --------------------------------------------------------
    def _watching(self) -> bool:
        return self.mode != "off" and self._guarded and not self._stopped

    def _fired(self, results: Iterable[Firing | None], stream: bool = False) -> list[Firing]:
        """The firings among detector results that are not held by an earlier "not
        stuck" verdict, each emitted as LoopGuard.Fired.

        A stop from a stream always acts at once: the stream is marked immediate."""
        firings = [firing for firing in results if firing is not None]
        if stream:
            firings = [
                dataclasses.replace(f, immediate=True) if f.severity == "stop" else f
                for f in firings
            ]
        calls = self._record.calls if self._record is not None else 0
        firings = [firing for firing in firings if self._holds.admits(firing, calls)]
        for firing in firings:
            self._emit_fired(firing)
        return firings

    def _acts_alone(self, firing: Firing) -> bool:
        """A stop that acts without the judge: immediate, or no judge can answer."""
        return firing.severity == "stop" and (firing.immediate or not self._judge.reachable)

    def _to_judge(self, firings: list[Firing]) -> list[Firing]:
        """What the judge is asked about: judge-level firings, and stop levels that
        need a "stuck" verdict before they stop anything (stop levels first)."""
        stops = [f for f in firings if f.severity == "stop" and not self._acts_alone(f)]
        return stops + [f for f in firings if f.severity == "judge"]

    @staticmethod
    def _stop_levels(firings: list[Firing]) -> list[Firing]:
        return [f for f in firings if f.severity == "stop"]

    def _judge_missing(self, judged: list[Firing], judgement: Judgement) -> bool:
        """The judge gave no answer about a stop level and is now unreachable."""
        return (
            not judgement.answered and not self._judge.reachable and bool(self._stop_levels(judged))
        )

    def _no_judge_reason(self) -> str:
        return self._judge.last_error or "no answer"

    def _writing_report(self) -> bool:
        """The guard ended the turn, and the tool-less final report is streaming."""
        return self._stopped and self.mode == "active" and self._guarded

    def _cut_report(self, results: list[Firing | None]) -> Continue | Cut:
        """A final report that loops is cut like any stream; the turn has already ended,
        so nothing else that fires is judged, sent or logged."""
        stop = next((f for f in results if f is not None and f.severity == "stop"), None)
        if stop is None:
            return CONTINUE
        self._emit_fired(stop)
        self._emit_outcome(records.LoopGuardCut, stop, reason=stop.message or stop.headline)
        return Cut(stop.message or stop.headline, then=self._stop(stop))

    def _respond(self, firings: list[Firing]) -> Decision:
        """One decision for everything that fired on one event: stop > judge > warn."""
        decided = self._decide(firings)
        if decided is None:
            return CONTINUE
        decision, firing, judged = decided
        return self._apply(decision, firing, judged=judged, resumable=True)

    def _respond_in_stream(self, firings: list[Firing]) -> Continue | Warn | Cut:
        """As `_respond`, but a redirect or stop first cuts the looping stream."""
        decided = self._decide(firings)
        if decided is None:
            return CONTINUE
        decision, firing, judged = decided
        if isinstance(decision, Redirect | Stop):
            acting = min(firings, key=lambda f: _SEVERITY_ORDER.get(f.severity, 9))
            decision = Cut(acting.message or acting.headline, then=decision)
        elif not isinstance(decision, Warn):
            return CONTINUE
        return self._apply(decision, firing, judged=judged, resumable=True)

    def _decide(self, firings: list[Firing]) -> tuple[Decision, Firing, bool] | None:
        """What active mode does about `firings`, the firing it names, and whether judged."""
        alone = [f for f in firings if self._acts_alone(f)]
        judged = self._to_judge(firings)
        warnings = [f for f in firings if f.severity == "warn"]
        if alone:
            no_judge = None if alone[0].immediate else self._no_judge_reason()
            return self._strike(alone[0], no_judge), alone[0], False
        if judged:
            judgement = self._ask_judge(judged, final=False)
            if judgement.action == "redirect" and judgement.note is not None:
                return self._redirect(judgement.note), judged[0], True
            if judgement.action == "stop":
                return self._stop(judged[0]), judged[0], True
            if self._judge_missing(judged, judgement):
                stop = self._stop_levels(judged)[0]
                return self._strike(stop, self._no_judge_reason()), stop, False
            return None
        if warnings:
            return Warn(warn_message(warnings)), warnings[0], False
        return None

    def _strike(self, firing: Firing, no_judge: str | None = None) -> Redirect | Stop:
        """A check that acts without the judge, like a stuck verdict: redirect first,
        then stop. `no_judge`: why no judge could answer (the note and notice say so)."""
        if self._redirected:
            return self._stop(firing, no_judge)
        return self._redirect(redirect_note(self._task(), firing, None, no_judge=no_judge))

    def _redirect(self, note: str) -> Redirect:
        self._redirected = True  # the turn's one note is spent, whether or not it is sent
        return Redirect(note)

    def _stop(self, firing: Firing, no_judge: str | None = None) -> Stop:
        return Stop(stop_notice(firing, no_judge=no_judge), stop_instruction())

    def _ask_judge(self, judged: list[Firing], final: bool) -> Judgement:
        record = self._record
        assert record is not None
        judgement = self._judge.ask(
            judged, record, mode=self.mode, redirect_used=self._redirected, final=final
        )
        holds = judgement.answered and not judgement.acted_on.stuck
        for detector in self._detectors:
            for firing in judged:
                detector.after_verdict(firing, judgement.acted_on)
                if holds:
                    detector.hold(firing)
        if holds:
            for firing in judged:
                self._holds.hold(firing, record.calls)
        return judgement

    def _task(self) -> str:
        return self._record.ctx.task if self._record is not None else ""

    # -- applying the mode -------------------------------------------------------------
    def _apply(
        self,
        decision: D,
        firing: Firing,
        *,
        judged: bool = False,
        resumable: bool = False,
        tool: str | None = None,
    ) -> D | Continue:
        """The one place the mode changes what the agent sees.

        Active mode acts on the decision and emits what it did; shadow mode has
        already judged and logged everything, and carries on.
        """
        if self.mode != "active":
            return CONTINUE
        return self._act(decision, firing, judged=judged, resumable=resumable, tool=tool)

    def _act(
        self,
        decision: D,
        firing: Firing,
        *,
        judged: bool,
        resumable: bool,
        tool: str | None,
    ) -> D:
        """Carry out a decision in active mode, and say so with an event."""
        if isinstance(decision, Cut):
            then = self._act(decision.then, firing, judged=judged, resumable=resumable, tool=tool)
            return dataclasses.replace(decision, then=then)
        # A stop level that acted because no judge could answer says so in its event.
        alone = not judged and firing.severity == "stop" and not firing.immediate
        no_judge = self._no_judge_reason() if alone else None
        if isinstance(decision, Redirect):
            self._emit_outcome(
                records.LoopGuardRedirected,
                firing,
                note=decision.note,
                judged=judged,
                no_judge=no_judge,
            )
        elif isinstance(decision, Stop):
            self._stopped = True
            notice = decision.notice  # the resume below leaves it as it is
            if resumable:
                decision = dataclasses.replace(decision, resume=self._next_resume())
            self._emit_outcome(
                records.LoopGuardStopped,
                firing,
                notice=notice,
                judged=judged,
                no_judge=no_judge,
            )
        elif isinstance(decision, Warn):
            self._emit_outcome(records.LoopGuardWarned, firing, message=decision.message)
        elif isinstance(decision, Block):
            self._emit_outcome(records.LoopGuardBlocked, firing, reason=decision.reason, tool=tool)
        return decision

    def _next_resume(self) -> AutoResume | None:
        """After a loop stop: the automated turn that resumes it, while allowed.

        At most `autoResume.maxResumes` in a row; a turn from the user resets the count.
        """
        settings = self.config.detectors.auto_resume
        if not settings.enabled or self._resumes >= settings.max_resumes:
            return None
        self._resumes += 1
        return AutoResume(settings.message, self._resumes, settings.max_resumes)

    # -- events ------------------------------------------------------------------------------
    def _emit_fired(self, firing: Firing) -> None:
        if firing.severity == "stop" and self._acts_alone(firing):
            action = "stop" if self._redirected else "redirect"
        elif firing.severity == "stop":
            action = "judge"  # a stop level asks the judge first
        else:
            action = firing.severity
        self._emit(
            records.LoopGuardFired(
                detector=firing.detector,
                fingerprint=firing.fingerprint,
                headline=firing.headline,
                severity=firing.severity,
                step=firing.step,
                message=firing.message,
                mode=self.mode,
                action=action,
                applied=self.mode == "active",
            )
        )

    def _emit_outcome(
        self, kind: type[records.LoopGuardOutcome], firing: Firing, **fields: Any
    ) -> None:
        self._emit(
            kind(
                detector=firing.detector,
                headline=firing.headline,
                step=firing.step,
                mode=self.mode,
                **fields,
            )
        )
