"""LoopGuard: the turn loop's one contact with loop detection.

The turn loop hands over plain events (a call about to run, a tool result, a
streamed delta, a finished response, the end of the turn) and acts on the
decision that comes back. Cheap checks (the triggers and the peer detectors) run
on every event; when one fires at "judge" level the judge model is asked, once
per event at most. In active mode the first stuck verdict of a turn redirects
the agent with one note and a later one ends the turn; in shadow mode everything
is judged, logged and emitted, but the agent never sees a difference.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from caretz.guard.config import LoopGuardConfig
from caretz.guard.detector import Detector
from caretz.guard.detectors import DelegationChain, build_detectors
from caretz.guard.model import (
    CONTINUE,
    AbortStream,
    Block,
    Continue,
    Decision,
    Firing,
    Judge,
    JudgeResult,
    Mode,
    Redirect,
    Stop,
    ToolObservation,
    TurnContext,
    Verdict,
    Warn,
)
from caretz.guard.notes import (
    block_reason,
    disallowed_reason,
    end_turn_notice,
    redirect_note,
    stop_instruction,
    stop_notice,
    warn_message,
)
from caretz.guard.summary import TurnRecord, build_summary
from caretz.guard.triggers import build_triggers
from caretz.messages import Message, ToolCall, Usage

Emit = Callable[..., dict[str, Any]]

_SEVERITY_ORDER = {"stop": 0, "judge": 1, "warn": 2, "block": 3}


class LoopGuard:
    """Watches one agent's turns; see the module docstring for what it decides."""

    def __init__(
        self,
        config: LoopGuardConfig,
        judge: Judge,
        emit: Emit,
        clock: Callable[[], float] = time.monotonic,
        detectors: list[Detector] | None = None,
    ):
        self.config = config
        self.mode: Mode = config.mode  # settable at run time (/loop-guard shadow)
        self._judge = judge
        self._emit = emit
        self._clock = clock
        # Who delegated to whom: shared with the guards of this session's subagents.
        self.delegation = DelegationChain()
        if detectors is None:
            detectors = [
                *build_triggers(config),
                *build_detectors(config.detectors, self.delegation),
            ]
        self._detectors = detectors
        self._disallowed = DisallowedTools(config.detectors.disallowed_tools)
        self._record: TurnRecord | None = None
        self._guarded = True
        self._inactive_reported: set[str] = set()
        self._resumes = 0
        self._resume_due = False
        self._start_turn_state()

    def _start_turn_state(self) -> None:
        self._note: str | None = None
        self._redirected = False  # a note was sent this turn (active mode)
        self._shadow_redirected = False  # a note would have been sent (shadow mode)
        self._stopped = False
        self._deferred: list[Firing] = []  # non-block firings raised before a call ran
        self._pending_warning: str | None = None  # a warning raised mid-stream

    # -- public state ----------------------------------------------------------------
    @property
    def note(self) -> str | None:
        """The redirect note, sent at the end of each remaining request of this turn."""
        return self._note if self.mode == "active" else None

    @property
    def stopped(self) -> bool:
        """The guard ended this turn."""
        return self._stopped

    @property
    def record(self) -> TurnRecord | None:
        """What the guard has recorded of the current turn (what the judge's summary shows)."""
        return self._record

    def stop_instruction(self) -> str:
        return stop_instruction()

    def for_subagent(self) -> LoopGuard:
        """The guard a subagent inherits: same settings, judge, mode and delegation chain."""
        detectors = [
            *build_triggers(self.config),
            *build_detectors(self.config.detectors, self.delegation),
        ]
        child = LoopGuard(self.config, self._judge, self._emit, self._clock, detectors)
        child.mode = self.mode
        child.delegation = self.delegation
        return child

    # -- turn boundaries -----------------------------------------------------------------
    def begin_turn(self, ctx: TurnContext) -> None:
        self._start_turn_state()
        self._resume_due = False
        if ctx.from_user:
            self._resumes = 0
        self._record = TurnRecord.start(ctx, self._clock)
        self._guarded = self.config.guards_model(ctx.model_ref)
        for detector in self._detectors:
            detector.begin_turn(ctx)
        if not self._guarded and self.mode != "off":
            self._report_inactive(ctx.model_ref)

    def _report_inactive(self, model_ref: str) -> None:
        if model_ref in self._inactive_reported:
            return
        self._inactive_reported.add(model_ref)
        self._emit("LoopGuard.Inactive", model_ref=model_ref, models=self.config.models)

    def end_turn(self, final_text: str) -> Continue | Stop:
        """Cross-turn checks; Stop means: do not continue automatically."""
        record = self._record
        if not self._watching() or record is None:
            return CONTINUE
        progress = record.successes > 0
        firings = self._fired(d.end_turn(final_text, progress) for d in self._detectors)
        if not firings:
            return CONTINUE
        stop = next((f for f in firings if f.severity == "stop"), None)
        judged = [f for f in firings if f.severity == "judge"]
        if stop is None and judged and self._ask_judge(judged, final=True).action != "continue":
            stop = judged[0]
        if stop is None or self.mode != "active":
            return CONTINUE
        self._stopped = True
        notice = end_turn_notice(stop)
        self._emit_outcome(
            "LoopGuard.Stopped", stop, notice=notice, judged=stop.severity == "judge"
        )
        return Stop(notice)

    def auto_resume_message(self) -> str | None:
        """After the guard ended a turn: the message that resumes it, while allowed.

        At most `autoResume.maxResumes` in a row; a turn from the user resets the count.
        """
        settings = self.config.detectors.auto_resume
        if not (settings.enabled and self._resume_due):
            return None
        self._resume_due = False
        if self._resumes >= settings.max_resumes:
            return None
        self._resumes += 1
        self._emit(
            "LoopGuard.Resuming",
            count=self._resumes,
            max=settings.max_resumes,
            message=settings.message,
        )
        return settings.message

    # -- events from the turn loop -----------------------------------------------------
    def before_tool(self, call: ToolCall) -> Continue | Block:
        refusal = self._refuse_disallowed(call)
        if refusal is not None:
            return refusal
        if not self._watching() or self._record is None:
            return CONTINUE
        index = self._record.calls
        firings = self._fired(d.before_tool(call, index) for d in self._detectors)
        blocks = [f for f in firings if f.severity == "block"]
        # Anything else raised here is acted on with the call's result.
        self._deferred.extend(f for f in firings if f.severity != "block")
        if not blocks or self.mode != "active":
            return CONTINUE
        reason = block_reason(blocks[0])
        self._emit_outcome("LoopGuard.Blocked", blocks[0], reason=reason, tool=call.name)
        return Block(reason)

    def after_tool(self, obs: ToolObservation) -> Decision:
        if not self._watching() or self._record is None:
            return CONTINUE
        self._record.add_call(obs)
        firings = self._fired(d.after_tool(obs) for d in self._detectors)
        deferred, self._deferred = self._deferred, []
        return self._decide(deferred + firings)

    def on_text(self, text: str) -> Continue | AbortStream:
        if not self._watching():
            return CONTINUE
        firings = self._fired(d.on_text(text) for d in self._detectors)
        decision = self._decide(firings)
        if isinstance(decision, Warn):
            self._pending_warning = decision.message  # sent with the next response's decision
            return CONTINUE
        return self._in_stream(decision, firings)

    def on_thinking(self, text: str) -> Continue | Warn | AbortStream:
        if not self._watching():
            return CONTINUE
        now = self._clock()
        firings = self._fired(d.on_thinking(text, now) for d in self._detectors)
        decision = self._decide(firings)
        if isinstance(decision, Warn):
            return decision
        return self._in_stream(decision, firings)

    def after_response(self, message: Message, usage: Usage) -> Decision:
        if not self._watching() or self._record is None:
            return CONTINUE
        self._record.add_response(message, usage)
        decision = self._decide(self._fired(d.after_response(message) for d in self._detectors))
        warning, self._pending_warning = self._pending_warning, None
        if warning is not None and isinstance(decision, Continue):
            return Warn(warning)
        return decision

    # -- deciding --------------------------------------------------------------------------
    def _watching(self) -> bool:
        return self.mode != "off" and self._guarded and not self._stopped

    def _in_stream(self, decision: Decision, firings: list[Firing]) -> Continue | AbortStream:
        if isinstance(decision, Redirect | Stop):
            acted = min(firings, key=lambda f: _SEVERITY_ORDER.get(f.severity, 9))
            return AbortStream(acted.message or acted.headline, then=decision)
        return CONTINUE

    def _fired(self, results: Iterable[Firing | None]) -> list[Firing]:
        """The firings among detector results, each emitted as LoopGuard.Fired."""
        firings = [firing for firing in results if firing is not None]
        for firing in firings:
            self._emit_fired(firing)
        return firings

    def _decide(self, firings: list[Firing]) -> Decision:
        """One decision for everything that fired on one event: stop > judge > warn."""
        if not firings:
            return CONTINUE
        stops = [f for f in firings if f.severity == "stop"]
        if stops:
            return self._strike(stops[0])
        judged = [f for f in firings if f.severity == "judge"]
        if judged:
            return self._judge_and_act(judged)
        warnings = [f for f in firings if f.severity == "warn"]
        if warnings and self.mode == "active":
            message = warn_message(warnings)
            self._emit_outcome("LoopGuard.Warned", warnings[0], message=message)
            return Warn(message)
        return CONTINUE

    def _redirect_used(self) -> bool:
        return self._redirected if self.mode == "active" else self._shadow_redirected

    def _action_for(self, firing: Firing) -> str:
        if firing.severity == "stop":
            return "stop" if self._redirect_used() else "redirect"
        return firing.severity

    def _strike(self, firing: Firing) -> Decision:
        """A check that acts at once, like a stuck verdict: redirect first, then stop."""
        if self._redirect_used():
            return self._stop(firing, judged=False)
        return self._redirect(redirect_note(self._task(), firing, None), firing, judged=False)

    def _judge_and_act(self, judged: list[Firing]) -> Decision:
        judgement = self._ask_judge(judged, final=False)
        if judgement.action == "redirect" and judgement.note is not None:
            return self._redirect(judgement.note, judged[0], judged=True)
        if judgement.action == "stop":
            return self._stop(judged[0], judged=True)
        return CONTINUE

    def _ask_judge(self, judged: list[Firing], final: bool) -> _Judgement:
        """Ask the judge about `judged` (one call) and log the verdict with what follows."""
        record = self._record
        assert record is not None
        primary = judged[0]
        self._emit(
            "LoopGuard.Judging",
            trigger=primary.detector,
            headline=primary.headline,
            step=primary.step,
            also=[f.headline for f in judged[1:]],
        )
        summary = build_summary(record, judged)
        result = self._call_judge(summary)
        verdict = result.verdict if result.error is None else _not_stuck(result.verdict)
        record.add_verdict(primary.step, primary.headline, verdict, result.error)
        unsure = verdict.stuck and verdict.confidence < self.config.judge.min_confidence
        acted_on = _not_stuck(verdict) if unsure else verdict
        for detector in self._detectors:
            for firing in judged:
                detector.after_verdict(firing, acted_on)
        if not acted_on.stuck:
            action = "continue"
        elif final or self._redirect_used():
            action = "stop"
        else:
            action = "redirect"
        note = redirect_note(self._task(), primary, verdict) if action == "redirect" else None
        self._emit(
            "LoopGuard.Judged",
            trigger=primary.detector,
            headline=primary.headline,
            triggers=[f.headline for f in judged],
            step=primary.step,
            summary=summary,
            verdict=verdict.to_dict(),
            model=result.model,
            latency_s=round(result.latency_s, 3),
            usage=result.usage.to_dict(),
            error=result.error,
            mode=self.mode,
            action=action,
            applied=self.mode == "active" and action != "continue",
            note=note,
            unsure=unsure,
        )
        return _Judgement(action, note)

    def _call_judge(self, summary: str) -> JudgeResult:
        started = self._clock()
        try:
            return self._judge(summary, self.config.judge_timeout_s)
        except Exception as error:  # a judge that raises counts as "not stuck", like an error
            model = str(getattr(self._judge, "model_ref", getattr(self._judge, "model", "?")))
            latency = self._clock() - started
            return JudgeResult(_not_stuck(None), model, latency, Usage(), f"error: {error}")

    def _redirect(self, note: str, firing: Firing, judged: bool) -> Decision:
        if self.mode != "active":
            self._shadow_redirected = True
            return CONTINUE
        self._redirected = True
        self._note = note
        self._emit_outcome("LoopGuard.Redirected", firing, note=note, judged=judged)
        return Redirect(note)

    def _stop(self, firing: Firing, judged: bool) -> Decision:
        if self.mode != "active":
            return CONTINUE
        self._stopped = True
        self._resume_due = True
        notice = stop_notice(firing)
        self._emit_outcome("LoopGuard.Stopped", firing, notice=notice, judged=judged)
        return Stop(notice)

    def _task(self) -> str:
        return self._record.ctx.task if self._record is not None else ""

    # -- events ------------------------------------------------------------------------------
    def _emit_fired(self, firing: Firing) -> None:
        self._emit(
            "LoopGuard.Fired",
            detector=firing.detector,
            fingerprint=firing.fingerprint,
            headline=firing.headline,
            severity=firing.severity,
            step=firing.step,
            message=firing.message,
            mode=self.mode,
            action=self._action_for(firing),
            applied=self.mode == "active",
        )

    def _emit_outcome(self, type: str, firing: Firing, **fields: Any) -> None:
        self._emit(
            type,
            detector=firing.detector,
            headline=firing.headline,
            step=firing.step,
            mode=self.mode,
            **fields,
        )

    def _refuse_disallowed(self, call: ToolCall) -> Block | None:
        match = self._disallowed.check(call)
        if match is None:
            return None
        rule, pattern = match
        reason = disallowed_reason(call.name, rule, pattern)
        self._emit(
            "LoopGuard.Blocked",
            detector="disallowed-tools",
            headline=f'disallowed-tools: {call.name} matches "{pattern}"',
            tool=call.name,
            rule=rule,
            pattern=pattern,
            reason=reason,
            mode=self.mode,
        )
        return Block(reason)


@dataclass(frozen=True)
class _Judgement:
    action: str  # "continue", "redirect" or "stop" (what active mode does)
    note: str | None


def _not_stuck(verdict: Verdict | None) -> Verdict:
    confidence = verdict.confidence if verdict is not None else 0.0
    return Verdict(stuck=False, confidence=confidence)


# -- disallowedTools -------------------------------------------------------------------------

# Other names people give the same tools in their rules.
_TOOL_ALIASES = {
    "terminal": "bash",
    "shell": "bash",
    "run_shell_command": "bash",
    "write_file": "write",
    "edit_file": "edit",
    "str_replace_editor": "edit",
    "read_file": "read",
}
_PATH_KEYS = ("path", "file_path", "filepath", "filename", "file", "notebook_path", "target")
_COMMAND_SEPARATORS = re.compile(r"&&|\|\||;|\||\n|&")
_SUBSTITUTIONS = re.compile(r"\$\(((?:[^()]|\([^()]*\))*)\)|`([^`]*)`|<\(([^()]*)\)")
_GLOB_CHARS = re.compile(r"[*?\[]")


def _canonical_tool(name: str) -> str:
    lowered = name.strip().lower()
    return _TOOL_ALIASES.get(lowered, lowered)


def _squash(text: str) -> str:
    return " ".join(text.split())


class DisallowedTools:
    """The user's per-tool deny patterns (`loopGuard.detectors.disallowedTools`).

    For a shell command a pattern matches when it appears in the command after
    whitespace is normalized, in the whole command, in any part of it split on
    `&& || ; |`, or inside `$(…)` and backticks; quotes do not hide it. A pattern
    with `*`, `?` or `[` is a glob over those parts. For file tools a pattern is a
    glob over the path argument (the full path and the file name).
    """

    def __init__(self, rules: dict[str, list[str]]):
        self._rules = [
            (name, _canonical_tool(name), [p for p in patterns if p.strip()])
            for name, patterns in rules.items()
        ]

    def check(self, call: ToolCall) -> tuple[str, str] | None:
        """(rule name, pattern) of the first rule the call breaks, or None."""
        tool = _canonical_tool(call.name)
        for name, canonical, patterns in self._rules:
            if canonical != tool and not fnmatch.fnmatchcase(tool, canonical):
                continue
            for pattern in patterns:
                if _call_matches(call.arguments, pattern):
                    return name, pattern
        return None


def _call_matches(args: dict[str, Any], pattern: str) -> bool:
    command = args.get("command")
    if isinstance(command, str):
        return command_matches(command, pattern)
    paths = [args[key] for key in _PATH_KEYS if isinstance(args.get(key), str)]
    if paths:
        return any(path_matches(path, pattern) for path in paths)
    if pattern.strip() == "*":
        return True
    return any(isinstance(v, str) and pattern in v for v in args.values())


def command_matches(command: str, pattern: str) -> bool:
    """Whether a shell command contains the denied pattern (see DisallowedTools)."""
    wanted = _squash(pattern)
    if not wanted:
        return False
    texts = {command, re.sub(r"[\"'\\]", "", command)}
    for text in list(texts):
        for match in _SUBSTITUTIONS.finditer(text):
            texts.add(next(group for group in match.groups() if group is not None))
    parts = {_squash(text) for text in texts}
    for text in list(parts):
        parts.update(_squash(part) for part in _COMMAND_SEPARATORS.split(text))
    if _GLOB_CHARS.search(wanted):
        return any(fnmatch.fnmatchcase(part, f"*{wanted}*") for part in parts)
    return any(wanted in part for part in parts)


def path_matches(path: str, pattern: str) -> bool:
    """Whether a file path matches a glob, by full path, by file name or by path suffix."""
    normalized = posixpath.normpath(path.replace("\\", "/"))
    name = posixpath.basename(normalized)
    return (
        fnmatch.fnmatchcase(normalized, pattern)
        or fnmatch.fnmatchcase(name, pattern)
        or fnmatch.fnmatchcase(normalized, f"*/{pattern}")
    )
