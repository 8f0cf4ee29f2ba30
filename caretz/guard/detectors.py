"""Peer-style detectors: more cheap triggers beside the guard's own checks.

Each detector watches for one kind of loop that other agents catch (identical
calls, a repeated error, ping-pong, text-only rounds, circular subagents, a
streamed text or reasoning loop, the same answer turn after turn, a runaway
tool count) and returns a Firing. Its severity says what the guard does:
"judge" asks the judge model, "warn" tells the model once, "block" refuses the
call, "stop" acts at once (only where waiting would keep burning tokens).

Counting rules shared by all of them:
- a judge-level check fires when its count reaches the threshold, then counts
  again from there, so it fires again only after another full threshold;
- any verdict restarts every judge-level count, as for the guard's own
  triggers: the judge has seen the turn as it is; "stop" levels keep counting,
  so a judge that times out (which counts as "not stuck") cannot let a loop
  run forever.
"""

from __future__ import annotations

import re
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Literal

from caretz.guard.detector import Detector
from caretz.guard.detectors_config import (
    AlternationConfig,
    DetectorsConfig,
    IdenticalCallConfig,
    ReasoningConfig,
    RepeatedErrorConfig,
    SameAnswerConfig,
    StreamTextConfig,
    SubagentsConfig,
    ToolBudgetConfig,
    ToolRoundsConfig,
)
from caretz.guard.model import Firing, ToolObservation, TurnContext, Verdict
from caretz.guard.normalize import (
    call_signature,
    error_line,
    failure_fingerprint,
    normalize_output,
)
from caretz.messages import Message, ToolCall

Severity = Literal["judge", "warn", "block", "stop"]
SUBAGENT_TOOL = "task"
_HEADLINE_CHARS = 120


@dataclass
class DelegationChain:
    """Who delegated to whom in this session: the agent name at each depth.

    One chain is shared by every agent of a session, so a subagent's detectors
    see the agents above it (pass it to `build_detectors` for each of them).
    """

    names: list[str] = field(default_factory=list)

    def enter(self, depth: int, agent_name: str) -> None:
        del self.names[depth:]
        self.names.extend([""] * (depth - len(self.names)))
        self.names.append(agent_name)

    def above(self, depth: int) -> list[str]:
        """The agents from the top of the session down to `depth`, inclusive."""
        return [name for name in self.names[: depth + 1] if name]


def build_detectors(
    config: DetectorsConfig, delegation: DelegationChain | None = None
) -> list[Detector]:
    """The enabled peer detectors for one session (or one agent of it).

    `delegation` is the session's delegation chain; give subagents the chain
    of the session that starts them so circular hand-offs are seen.
    """
    candidates: list[tuple[bool, Detector]] = [
        (config.subagents.enabled, SubagentDetector(config.subagents, delegation)),
        (config.tool_budget.enabled, ToolBudgetDetector(config.tool_budget)),
        (config.identical_call.enabled, IdenticalCallDetector(config.identical_call)),
        (config.repeated_error.enabled, RepeatedErrorDetector(config.repeated_error)),
        (config.alternation.enabled, AlternationDetector(config.alternation)),
        (config.tool_rounds.enabled, ToolRoundsDetector(config.tool_rounds)),
        (config.stream_text.enabled, StreamTextDetector(config.stream_text)),
        (config.reasoning.enabled, ReasoningDetector(config.reasoning)),
        (config.same_answer.enabled, SameAnswerDetector(config.same_answer)),
    ]
    return [detector for enabled, detector in candidates if enabled]


# ---------------------------------------------------------------- helpers


def _result_key(obs: ToolObservation) -> str:
    status = {True: "failed", False: "ok", None: "?"}[obs.failed]
    return f"{status}\x00{normalize_output(obs.output)}"


def _short(text: str, limit: int = _HEADLINE_CHARS) -> str:
    """One line, at most `limit` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _error_text(output: str) -> str:
    """The line of a failed result that names the error, normalized, for headlines."""
    return normalize_output(error_line(output)) or "(no output)"


def _firing(
    detector: str,
    fingerprint: str,
    what: str,
    severity: Severity = "judge",
    step: int | None = None,
    message: str = "",
) -> Firing:
    return Firing(
        detector=detector,
        fingerprint=fingerprint,
        headline=_short(f"{detector}: {what}"),
        severity=severity,
        step=step,
        message=message,
    )


# ---------------------------------------------------------------- identical calls


class IdenticalCallDetector(Detector):
    """The same call (and, by default, the same result) again and again (seeds 001–003)."""

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

    def begin_turn(self, ctx: TurnContext) -> None:
        self._reset_turn()

    def after_verdict(self, firing: Firing, verdict: Verdict) -> None:
        self._warn_base = self._streak
        self._recent.clear()
        self._since = Counter()

    def after_tool(self, obs: ToolObservation) -> Firing | None:
        signature = call_signature(obs.tool, obs.args)
        key = signature
        if self.config.same_result_only:
            result = _result_key(obs)
            key += "\x00" + result
            if self._last_result.setdefault(signature, result) != result:
                # A call now returns something new (a poll moved on): the world changed,
                # so repeats spread out before it are no evidence of a loop.
                self._recent.clear()
                self._since = Counter()
            self._last_result[signature] = result
        if key == self._last_key:
            self._streak += 1
        else:
            self._last_key, self._streak, self._warn_base, self._stop_base = key, 1, 0, 0
        self._recent.append(key)
        self._since[key] += 1
        firing = self._check(key, signature, obs.index)
        if firing is not None:
            self._fired(key, firing.severity)
        return firing

    def _check(self, key: str, signature: str, step: int) -> Firing | None:
        c = self.config
        streak = self._streak
        if c.interrupt_streak and streak - self._stop_base >= c.interrupt_streak:
            return self._make(signature, streak, "stop", step, "in a row")
        if c.warn_streak and streak - self._warn_base >= c.warn_streak:
            return self._make(signature, streak, "judge", step, "in a row")
        # Spread-out repeats only: a run in a row is the streak levels' business.
        if streak > 1:
            return None
        in_window = self._recent.count(key)
        if c.window and c.max_in_window and in_window >= c.max_in_window:
            return self._make(signature, in_window, "judge", step, f"in the last {c.window} calls")
        total = self._since[key]
        if c.max_total and total >= c.max_total:
            return self._make(signature, total, "judge", step, "this turn")
        return None

    def _fired(self, key: str, severity: str) -> None:
        if severity == "stop":
            self._stop_base = self._streak
        self._warn_base = self._streak
        self._recent.clear()
        self._since[key] = 0

    def _make(
        self, signature: str, count: int, severity: Severity, step: int, where: str
    ) -> Firing:
        same = " with the same result" if self.config.same_result_only else ""
        message = (
            f"The call {_short(signature, 200)} has run {count} times {where}{same}. "
            "Repeating it will not change anything: use what it returned, or change approach."
        )
        return _firing(self.name, signature, f"{count}× {signature}", severity, step, message)


# ---------------------------------------------------------------- repeated error


class RepeatedErrorDetector(Detector):
    """The identical error on consecutive failed calls; a failed edit re-applied (seed 002)."""

    name = "repeated-error"

    def __init__(self, config: RepeatedErrorConfig):
        self.config = config
        self._reset_turn()

    def _reset_turn(self) -> None:
        self._last_error: str | None = None
        self._run = 0  # consecutive failed calls ending in `_last_error`
        self._run_base = 0
        self._edits: dict[str, tuple[str, int]] = {}  # edit signature → (error, times)
        self._edit_base: dict[str, int] = {}

    def begin_turn(self, ctx: TurnContext) -> None:
        self._reset_turn()

    def after_verdict(self, firing: Firing, verdict: Verdict) -> None:
        self._run_base = self._run
        self._edit_base = {sig: times for sig, (_, times) in self._edits.items()}

    def after_tool(self, obs: ToolObservation) -> Firing | None:
        if obs.failed is not True:  # a success (or an unknown outcome) ends the run
            self._last_error, self._run, self._run_base = None, 0, 0
            return None
        error = failure_fingerprint(obs)
        if error == self._last_error:
            self._run += 1
        else:
            self._last_error, self._run, self._run_base = error, 1, 0
        signature = call_signature(obs.tool, obs.args)
        edit_times = self._count_edit(obs.tool, signature, normalize_output(obs.output))
        firing = self._check_run(obs) or self._check_edit(obs, signature, edit_times)
        if firing is not None:
            self._run_base = self._run
            if edit_times:
                self._edit_base[signature] = edit_times
        return firing

    def _count_edit(self, tool: str, signature: str, error: str) -> int:
        if tool not in self.config.edit_tools:
            return 0
        previous_error, times = self._edits.get(signature, ("", 0))
        if previous_error != error:
            times = 0
            self._edit_base.pop(signature, None)
        self._edits[signature] = (error, times + 1)
        return times + 1

    def _check_run(self, obs: ToolObservation) -> Firing | None:
        needed = self.config.consecutive
        if not needed or self._run - self._run_base < needed:
            return None
        error = _error_text(obs.output)
        return _firing(
            self.name,
            f"{obs.tool}: {error}",
            f"{self._run}× in a row {obs.tool}: {error}",
            step=obs.index,
            message=f"The last {self._run} calls failed with the same error: {_short(error, 200)}",
        )

    def _check_edit(self, obs: ToolObservation, signature: str, times: int) -> Firing | None:
        needed = self.config.same_edit
        if not needed or times - self._edit_base.get(signature, 0) < needed:
            return None
        error = _error_text(obs.output)
        return _firing(
            self.name,
            f"{signature}: {error}",
            f"same edit failed {times}× {obs.tool}: {error}",
            step=obs.index,
            message=(
                f"The same edit has now failed {times} times with the same error: "
                f"{_short(error, 200)}. Applying it again will fail again."
            ),
        )


# ---------------------------------------------------------------- alternation


class AlternationDetector(Detector):
    """A,B,A,B… and short cycles replayed with the same results at every position."""

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

    def begin_turn(self, ctx: TurnContext) -> None:
        self._reset_turn()

    def after_verdict(self, firing: Firing, verdict: Verdict) -> None:
        self._matched = dict.fromkeys(self._matched, 0)

    def after_tool(self, obs: ToolObservation) -> Firing | None:
        signature = call_signature(obs.tool, obs.args)
        self._keys.append(signature + "\x00" + _result_key(obs))
        self._signatures.append(signature)
        keys = self._keys
        for period in self._matched:
            same = len(keys) > period and keys[-1] == keys[-1 - period]
            self._matched[period] = self._matched[period] + 1 if same else 0
        if not self.config.repeats:
            return None
        for period, matched in self._matched.items():
            cycle = list(keys)[-period:]
            if matched >= period * (self.config.repeats - 1) and len(set(cycle)) > 1:
                self._matched = dict.fromkeys(self._matched, 0)
                return self._make(period, obs.index)
        return None

    def _make(self, period: int, step: int) -> Firing:
        calls = list(self._signatures)[-period:]
        cycle = " → ".join(_short(call, 60) for call in calls)
        times = self.config.repeats
        return _firing(
            self.name,
            " → ".join(calls),
            f"{period}-call cycle ×{times}: {cycle}",
            step=step,
            message=(
                f"The same {period} calls have repeated {times} times, each with the same "
                f"results as before: {cycle}. Nothing changes between the rounds."
            ),
        )


# ---------------------------------------------------------------- tool rounds


class ToolRoundsDetector(Detector):
    """Responses that only call tools, round after round, with no word to the user (seed 003)."""

    name = "tool-rounds"

    def __init__(self, config: ToolRoundsConfig):
        self.config = config
        self._rounds = 0
        self._base = 0

    def begin_turn(self, ctx: TurnContext) -> None:
        self._rounds = self._base = 0

    def after_response(self, message: Message) -> Firing | None:
        if not message.tool_calls or message.content.strip():
            self._rounds = self._base = 0
            return None
        self._rounds += 1
        limit = self.config.max_rounds
        if not limit or self._rounds - self._base < limit:
            return None
        self._base = self._rounds
        return _firing(
            self.name,
            "tool rounds without text",
            f"{self._rounds} tool rounds in a row without a word to the user",
            "warn",
            message=self.config.recovery_message,
        )


# ---------------------------------------------------------------- subagents


class SubagentDetector(Detector):
    """Circular hand-offs (A → B → A) and delegation beyond the maximum depth (seed 002).

    A subagent runs through the `task` tool, whose `agent` argument names it.
    """

    name = "subagents"

    def __init__(self, config: SubagentsConfig, chain: DelegationChain | None = None):
        self.config = config
        self.chain = chain if chain is not None else DelegationChain()
        # Turns in progress, innermost last: a subagent that shares this detector
        # with its parent runs inside the parent's turn.
        self._turns: list[TurnContext] = []

    def begin_turn(self, ctx: TurnContext) -> None:
        while self._turns and self._turns[-1].depth >= ctx.depth:
            self._turns.pop()
        self._turns.append(ctx)
        self.chain.enter(ctx.depth, ctx.agent_name)

    def end_turn(self, final_text: str, progress: bool) -> Firing | None:
        if len(self._turns) > 1:
            self._turns.pop()
            current = self._turns[-1]
            self.chain.enter(current.depth, current.agent_name)
        return None

    def before_tool(self, call: ToolCall, index: int) -> Firing | None:
        if call.name != SUBAGENT_TOOL:
            return None
        current = self._turns[-1] if self._turns else TurnContext(task="", model_ref="")
        target = str(call.arguments.get("agent") or "")
        chain = self.chain.above(current.depth)
        if self.config.block_circular and target and target in chain:
            path = " → ".join([*chain, target])
            return self._block(
                f"circular:{path}",
                f"circular hand-off {path}",
                index,
                f"Delegation to {target!r} refused: {target!r} is already working on this "
                f"({path}). Do the work yourself, or finish and report back to the agent "
                "that asked you.",
            )
        depth = current.depth + 1
        limit = self.config.max_depth
        if limit and depth > limit:
            return self._block(
                f"depth:{target}",
                f"depth {depth} > {limit} delegating to {target or 'a subagent'}",
                index,
                f"Delegation refused: it would nest subagents {depth} deep, and the limit is "
                f"{limit}. Do this part yourself.",
            )
        return None

    def _block(self, fingerprint: str, what: str, index: int, message: str) -> Firing:
        return _firing(self.name, fingerprint, what, "block", index, message)


# ---------------------------------------------------------------- streamed text


_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_STREAM_WINDOW = 8000  # characters of the answer kept for the check
_MAX_CANDIDATES = 64  # earlier occurrences of the tail tried as period starts


def repeated_tail(text: str, min_period: int, repeats: int) -> str | None:
    """The unit that the end of `text` repeats `repeats` times in a row, if any.

    The unit is at least `min_period` characters and its own shortest period,
    so a long run of "=" or of "ab" is not a unit. Only exact repetition
    counts: list items or table rows that share a long prefix but differ at
    the end are not periodic.
    """
    size = len(text)
    if size < min_period * repeats:
        return None
    probe = text[size - min_period :]
    start = text.rfind(probe, 0, size - 1)
    for _ in range(_MAX_CANDIDATES):
        if start < 0:
            return None
        period = size - min_period - start
        if period * repeats > size:
            return None
        if period >= min_period:
            unit = text[size - period :]
            primitive = (unit + unit).find(unit, 1) == period
            if primitive and text.endswith(unit * repeats):
                return unit
        start = text.rfind(probe, 0, start + min_period - 1)
    return None


def _is_table(unit: str) -> bool:
    lines = [line.strip() for line in unit.splitlines() if line.strip()]
    return bool(lines) and all(line.startswith("|") for line in lines)


class StreamTextDetector(Detector):
    """The streamed answer repeating itself (gemini-cli's "chanting", seed 003).

    Fires "stop" so the guard aborts the stream at once. Strikes count the
    loops across turns (the headline says "strike k/N"); `reset_after` clean
    responses or tool calls, or a genuine user turn, clear them.
    """

    name = "stream-text"

    def __init__(self, config: StreamTextConfig):
        self.config = config
        self.strikes = 0
        self._clean = 0
        self._reset_stream()

    def _reset_stream(self) -> None:
        self._segment = ""  # text since the last code fence
        self._line = ""  # the unfinished last line
        self._in_code = False
        self._fired_in_response = False

    def begin_turn(self, ctx: TurnContext) -> None:
        self._reset_stream()
        if ctx.from_user:
            self.strikes = self._clean = 0

    def on_text(self, text: str) -> Firing | None:
        self._feed(text)
        c = self.config
        repeats = c.max_repeats_in_code if self._in_code else c.max_repeats
        if not repeats:
            return None
        tail = (self._segment + self._line)[-_STREAM_WINDOW:]
        unit = repeated_tail(tail, c.min_period, repeats)
        if unit and not self._in_code and _is_table(unit):
            # Identical table rows are sometimes asked for (a blank form): treat as code.
            repeats = c.max_repeats_in_code
            unit = repeated_tail(tail, c.min_period, repeats) if repeats else None
        return self._strike(unit, repeats) if unit else None

    def after_response(self, message: Message) -> Firing | None:
        self._clean_step()
        self._reset_stream()
        return None

    def after_tool(self, obs: ToolObservation) -> Firing | None:
        self._clean_step()
        self._reset_stream()
        return None

    def _feed(self, text: str) -> None:
        """Keep the text since the last code fence; a fence line flips in/out of code."""
        self._line += text
        *complete, self._line = self._line.split("\n")
        for line in complete:
            if _FENCE.match(line):
                self._in_code = not self._in_code
                self._segment = ""
            else:
                self._segment += line + "\n"
        self._segment = self._segment[-_STREAM_WINDOW:]
        self._line = self._line[-_STREAM_WINDOW:]

    def _clean_step(self) -> None:
        if self._fired_in_response:
            return
        self._clean += 1
        if self.config.reset_after and self._clean >= self.config.reset_after:
            self.strikes = self._clean = 0

    def _strike(self, unit: str, repeats: int) -> Firing:
        self.strikes += 1
        self._clean = 0
        self._reset_stream()
        self._fired_in_response = True
        last = self.strikes >= self.config.max_strikes
        then = (
            "Stop writing it; say in one sentence what you were trying to say, then go on."
            if last
            else "Continue without repeating it."
        )
        return _firing(
            self.name,
            _short(unit, 200),
            f"text repeated {repeats}× (strike {self.strikes}/{self.config.max_strikes}): "
            f"{_short(unit, 60)}",
            "stop",
            message=(
                f"Your answer started repeating the same text ({repeats} times: "
                f"{_short(unit, 120)!r}); the stream was stopped. {then}"
            ),
        )


# ---------------------------------------------------------------- reasoning


_REASONING_LINE_CHARS = 2000  # an unfinished line kept at most this long


class ReasoningDetector(Detector):
    """Reasoning that repeats its lines, or reasons on and on without acting (seed 003).

    Lines are compared trimmed, with whitespace collapsed and lower-cased;
    lines shorter than `min_line_chars` are ignored. Time comes from the `now`
    argument (the guard's injected clock).
    """

    name = "reasoning"

    def __init__(self, config: ReasoningConfig):
        self.config = config
        self._reset_response()

    def _reset_response(self) -> None:
        self._line = ""
        self._counts: Counter[str] = Counter()
        self._window: deque[str] = deque(maxlen=max(self.config.diversity_window, 1))
        self._reset_stall()

    def _reset_stall(self) -> None:
        self._stall_start: float | None = None
        self._stall_warned = False

    def begin_turn(self, ctx: TurnContext) -> None:
        self._reset_response()

    def on_text(self, text: str) -> Firing | None:
        if text.strip():
            self._reset_stall()
        return None

    def before_tool(self, call: ToolCall, index: int) -> Firing | None:
        self._reset_stall()
        return None

    def after_response(self, message: Message) -> Firing | None:
        self._reset_response()
        return None

    def on_thinking(self, text: str, now: float) -> Firing | None:
        if self._stall_start is None:
            self._stall_start = now
        return self._check_lines(text) or self._check_stall(now)

    def _check_lines(self, text: str) -> Firing | None:
        self._line += text
        *complete, self._line = self._line.split("\n")
        self._line = self._line[-_REASONING_LINE_CHARS:]
        for raw in complete:
            line = " ".join(raw.split()).lower()
            if len(line) < self.config.min_line_chars:
                continue
            self._counts[line] += 1
            self._window.append(line)
            firing = self._repeated(line) or self._low_diversity()
            if firing is not None:
                self._counts.clear()
                self._window.clear()
                return firing
        return None

    def _repeated(self, line: str) -> Firing | None:
        limit = self.config.max_line_repeats
        if not limit or self._counts[line] < limit:
            return None
        return _firing(
            self.name,
            line,
            f"reasoning line repeated {limit}×: {line}",
            "stop",
            message=(
                f"Your reasoning kept repeating the same line ({limit} times): "
                f"{_short(line, 120)!r}. Stop deliberating: act on what you know, or answer."
            ),
        )

    def _low_diversity(self) -> Firing | None:
        size = self.config.diversity_window
        if not size or len(self._window) < size:
            return None
        distinct = len(set(self._window))
        if distinct >= self.config.min_distinct_ratio * size:
            return None
        most = Counter(self._window).most_common(1)[0][0]
        return _firing(
            self.name,
            most,
            f"reasoning circles over {distinct} lines in its last {size}: {most}",
            "stop",
            message=(
                f"Your reasoning went round the same {distinct} thoughts for {size} lines. "
                "Stop deliberating: act on what you know, or answer."
            ),
        )

    def _check_stall(self, now: float) -> Firing | None:
        c = self.config
        if not c.stall_detection or self._stall_start is None:
            return None
        elapsed = now - self._stall_start
        if c.stall_stop_seconds and elapsed >= c.stall_stop_seconds:
            self._reset_stall()
            return self._stall(elapsed, "stop")
        if c.stall_warn_seconds and elapsed >= c.stall_warn_seconds and not self._stall_warned:
            self._stall_warned = True
            return self._stall(elapsed, "warn")
        return None

    def _stall(self, elapsed: float, severity: Severity) -> Firing:
        seconds = round(elapsed)
        return _firing(
            self.name,
            "reasoning-only stall",
            f"{seconds}s of reasoning without an answer or a tool call",
            severity,
            message=(
                f"You have reasoned for {seconds} seconds without answering or calling a "
                "tool. Act on what you have: make the next call, or answer."
            ),
        )


# ---------------------------------------------------------------- same answer


class SameAnswerDetector(Detector):
    """The same final answer turn after turn with no progress (seed 003's runaway guard).

    Automated turns (auto-resume, goal continuation) keep the count; a
    genuine user turn resets it. A turn whose tools made progress never adds
    a strike, whatever its text.
    """

    name = "same-answer"

    def __init__(self, config: SameAnswerConfig):
        self.config = config
        self._previous: str | None = None
        self._strikes = 0

    def begin_turn(self, ctx: TurnContext) -> None:
        if ctx.from_user:
            self._previous, self._strikes = None, 0

    def end_turn(self, final_text: str, progress: bool) -> Firing | None:
        answer = " ".join(final_text.split())
        previous, self._previous = self._previous, answer
        if progress:
            return None
        if answer != previous:
            self._strikes = 0
            return None
        self._strikes += 1
        limit = self.config.max_repeats
        if not limit or self._strikes < limit:
            return None
        self._strikes = 0
        shown = _short(answer, 80) or "(empty response)"
        return _firing(
            self.name,
            answer or "(empty response)",
            f"same answer {limit + 1} turns in a row: {shown}",
            "stop",
            message=(
                f"The last {limit + 1} turns ended with the same answer and no progress: "
                f"{shown!r}. Resuming again will not change it."
            ),
        )


# ---------------------------------------------------------------- tool budget


class ToolBudgetDetector(Detector):
    """A per-turn budget of tool calls: a warning with what remains, then a hard stop (seed 002)."""

    name = "tool-budget"

    def __init__(self, config: ToolBudgetConfig):
        self.config = config
        self._calls = 0

    def begin_turn(self, ctx: TurnContext) -> None:
        self._calls = 0

    def after_tool(self, obs: ToolObservation) -> Firing | None:
        self._calls += 1
        calls, c = self._calls, self.config
        if c.stop_at and calls >= c.stop_at:
            return _firing(
                self.name,
                "tool budget",
                f"{calls} tool calls this turn (budget {c.stop_at})",
                "stop",
                obs.index,
                f"This turn has used its budget of {c.stop_at} tool calls. Stop calling "
                "tools: report what you changed, what is unfinished and what you need.",
            )
        if c.warn_at and calls == c.warn_at:
            remaining = (
                f"; {c.stop_at - calls} remain before the turn is stopped" if c.stop_at else ""
            )
            return _firing(
                self.name,
                "tool budget",
                f"{calls} tool calls this turn",
                "warn",
                obs.index,
                f"This turn has made {calls} tool calls{remaining}. Finish the most important "
                "part first, and leave the rest for a report.",
            )
        return None
