"""Peer-style checks on what streams: an answer that repeats itself, and
reasoning that repeats its lines or runs on without acting. Both act at once
(severity "stop") so the guard can cut the stream before it burns more tokens.
"""

from __future__ import annotations

from collections import Counter, deque

from caretz.guard.detector import Detector, Severity, fire
from caretz.guard.detectors_config import ReasoningConfig, StreamTextConfig
from caretz.guard.model import Firing, ToolObservation, TurnContext
from caretz.guard.text_loop import TextLoopSettings, TextLoopWatch
from caretz.messages import Message, ToolCall
from caretz.text import one_line


def text_loop_settings(config: StreamTextConfig) -> TextLoopSettings:
    """The section's thresholds, as the plain check reads them."""
    return TextLoopSettings(
        config.enabled, config.min_period, config.max_repeats, config.max_repeats_in_code
    )


class StreamTextDetector(Detector):
    """The streamed answer repeating itself (gemini-cli's "chanting", Goa's stream loop).

    Fires "stop" so the guard aborts the stream at once. Strikes count the
    loops across turns (the headline says "strike k/N"); `reset_after` clean
    responses or tool calls, or a genuine user turn, clear them.
    """

    name = "stream-text"

    def __init__(self, config: StreamTextConfig):
        self.config = config
        self.strikes = 0
        self._clean = 0
        self._watch = TextLoopWatch(text_loop_settings(config))
        self._reset_stream()

    def _reset_stream(self) -> None:
        self._watch.reset()
        self._fired_in_response = False

    def begin_turn(self, ctx: TurnContext) -> None:
        self._reset_stream()
        if ctx.from_user:
            self.strikes = self._clean = 0

    def on_text(self, text: str) -> Firing | None:
        loop = self._watch.feed(text)
        return self._strike(loop.unit, loop.repeats) if loop else None

    def after_response(self, message: Message) -> Firing | None:
        self._clean_step()
        self._reset_stream()
        return None

    def after_tool(self, obs: ToolObservation) -> Firing | None:
        self._clean_step()
        self._reset_stream()
        return None

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
        return fire(
            self.name,
            one_line(unit, 200),
            f"text repeated {repeats}× (strike {self.strikes}/{self.config.max_strikes}): "
            f"{one_line(unit, 60)}",
            "stop",
            message=(
                f"Your answer started repeating the same text ({repeats} times: "
                f"{one_line(unit, 120)!r}); the stream was stopped. {then}"
            ),
            immediate=True,
        )


_REASONING_LINE_CHARS = 2000  # an unfinished line kept at most this long


class ReasoningDetector(Detector):
    """Reasoning that repeats its lines, or reasons on and on without acting (Goa's thinking-loop
    and reasoning-stall detectors).

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
            line = one_line(raw).lower()
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
        return fire(
            self.name,
            line,
            f"reasoning line repeated {limit}×: {line}",
            "stop",
            message=(
                f"Your reasoning kept repeating the same line ({limit} times): "
                f"{one_line(line, 120)!r}. Stop deliberating: act on what you know, or answer."
            ),
            immediate=True,
        )

    def _low_diversity(self) -> Firing | None:
        size = self.config.diversity_window
        if not size or len(self._window) < size:
            return None
        distinct = len(set(self._window))
        if distinct >= self.config.min_distinct_ratio * size:
            return None
        most = Counter(self._window).most_common(1)[0][0]
        return fire(
            self.name,
            most,
            f"reasoning circles over {distinct} lines in its last {size}: {most}",
            "stop",
            message=(
                f"Your reasoning went round the same {distinct} thoughts for {size} lines. "
                "Stop deliberating: act on what you know, or answer."
            ),
            immediate=True,
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
        return fire(
            self.name,
            "reasoning-only stall",
            f"{seconds}s of reasoning without an answer or a tool call",
            severity,
            message=(
                f"You have reasoned for {seconds} seconds without answering or calling a "
                "tool. Act on what you have: make the next call, or answer."
            ),
            immediate=severity == "stop",
        )
