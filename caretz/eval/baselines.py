"""Other agents' documented loop rules, replayable over the same recorded steps.

Each baseline takes a trajectory's steps and returns every place its rules
would have fired, as if it had only watched (a stop is recorded, and the
replay carries on so later firings are visible too). `action` says what the
rule does when it fires: "stop" ends the run, "block" refuses that one call,
"warn" only tells the model.

A call's signature is the tool name plus its sorted-key JSON arguments, as in
caveman's RetryLoopBreaker, and the guard's own identical-call check.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from caretz.eval.replay import Step
from caretz.guard.normalize import call_signature

Action = Literal["warn", "block", "stop"]


@dataclass(frozen=True)
class BaselineFiring:
    step: int  # 0-based index into the steps
    rule: str
    action: Action


@dataclass(frozen=True)
class Baseline:
    name: str
    source: str  # where its rules are documented
    run: Callable[[Sequence[Step]], list[BaselineFiring]]
    rules: str  # the rules as replayed, one line


def signature(step: Step) -> str:
    """Tool name plus sorted-key JSON arguments (RetryLoopBreaker's canonical signature)."""
    return call_signature(step.tool, step.args)


def consecutive_streaks(steps: Sequence[Step]) -> list[int]:
    """For each step, how many identical calls in a row end with it (1 = no repeat)."""
    streaks: list[int] = []
    previous = None
    for step in steps:
        current = signature(step)
        streaks.append(streaks[-1] + 1 if streaks and current == previous else 1)
        previous = current
    return streaks


# ---------------------------------------------------------------- caveman RetryLoopBreaker


def retry_loop_breaker(steps: Sequence[Step], threshold: int = 3) -> list[BaselineFiring]:
    """Raises on the (threshold+1)-th consecutive identical call; the run is interrupted."""
    return [
        BaselineFiring(i, "identical-streak", "stop")
        for i, streak in enumerate(consecutive_streaks(steps))
        if streak > threshold
    ]


# ---------------------------------------------------------------- anti-looping guardrail


def anti_looping_guardrail(
    steps: Sequence[Step],
    same_call: int = 3,
    same_call_window: int = 5,
    command_failures: int = 3,
    budget_warn: int = 12,
    budget_stop: int = 15,
) -> list[BaselineFiring]:
    """Same call 3+ times in 5 turns, identical error twice in a row, a command
    failing 3 times, and a 15-turn budget (warning at 12; 0 turns either off).
    Every step is one turn here: each recorded step is one model reply with one
    action."""
    firings: list[BaselineFiring] = []
    window: deque[str] = deque(maxlen=same_call_window)
    failures: Counter[str] = Counter()
    for i, step in enumerate(steps):
        current = signature(step)
        window.append(current)
        if window.count(current) >= same_call:
            firings.append(BaselineFiring(i, "same-call-3-in-5", "stop"))
        if i > 0 and _same_error(steps[i - 1], step):
            firings.append(BaselineFiring(i, "identical-error-twice", "stop"))
        if step.failed:
            failures[current] += 1
            if failures[current] >= command_failures:
                firings.append(BaselineFiring(i, "command-failed-3x", "stop"))
        if budget_warn and i + 1 == budget_warn:
            firings.append(BaselineFiring(i, "turn-budget-warning", "warn"))
        if budget_stop and i + 1 == budget_stop:
            firings.append(BaselineFiring(i, "turn-budget", "stop"))
    return firings


def _same_error(previous: Step, current: Step) -> bool:
    """Both calls failed with the same error text (the whole output: there is no
    separate stderr in the recordings)."""
    return bool(previous.failed and current.failed and previous.output == current.output)


# ---------------------------------------------------------------- Goa loop detection


def goa_loop_detection(
    steps: Sequence[Step],
    loop_warning: int = 10,
    loop_interrupt: int = 15,
    max_tool_repeat_consecutive: int = 2,
    max_tool_calls: int = 200,
    tool_call_limit_reset_window: int = 10,
    max_consecutive_tool_rounds: int = 15,
) -> list[BaselineFiring]:
    """Goa's tool-call defaults. Every recorded step is one model round that
    ends in a tool call, so the round limit counts steps."""
    firings: list[BaselineFiring] = []
    window: deque[str] = deque(maxlen=tool_call_limit_reset_window)
    rounds = 0
    for i, streak in enumerate(consecutive_streaks(steps)):
        current = signature(steps[i])
        window.append(current)
        if streak == loop_warning:
            firings.append(BaselineFiring(i, "loop-warning", "warn"))
        if streak >= loop_interrupt:
            firings.append(BaselineFiring(i, "loop-interrupt", "stop"))
        if streak > max_tool_repeat_consecutive:
            firings.append(BaselineFiring(i, "max-tool-repeat-consecutive", "block"))
        # Inert at the defaults: a window of 10 calls cannot hold 200 of one call.
        if window.count(current) > max_tool_calls:
            firings.append(BaselineFiring(i, "max-tool-calls-in-window", "block"))
        rounds += 1
        if max_consecutive_tool_rounds and rounds >= max_consecutive_tool_rounds:
            # Goa injects a recovery instruction; the run goes on.
            firings.append(BaselineFiring(i, "max-consecutive-tool-rounds", "warn"))
            rounds = 0
    return firings


BASELINES: dict[str, Baseline] = {
    baseline.name: baseline
    for baseline in [
        Baseline(
            name="retry-loop-breaker",
            source="caveman RetryLoopBreaker, threshold 3",
            run=retry_loop_breaker,
            rules="stop on the 4th consecutive identical call (name + sorted-key JSON args)",
        ),
        Baseline(
            name="anti-looping-guardrail",
            source="the anti-looping guardrail",
            run=anti_looping_guardrail,
            rules=(
                "stop: same call 3+ times in 5 turns; identical error twice in a row; "
                "a command failing 3 times; 15-turn budget (warn at 12)"
            ),
            # Not replayed: circular subagent hand-offs (the recordings have no subagents).
        ),
        Baseline(
            name="anti-looping-no-budget",
            source="the anti-looping guardrail, its loop rules without the 15-turn budget",
            run=lambda steps: anti_looping_guardrail(steps, budget_warn=0, budget_stop=0),
            rules="the guardrail's three loop rules alone, to show what they catch by themselves",
            # Not replayed: circular subagent hand-offs (the recordings have no subagents).
        ),
        Baseline(
            name="goa-loop-detection",
            source="Goa loop detection defaults",
            run=goa_loop_detection,
            rules=(
                "warn at a 10-call identical streak, stop at 15; block the 3rd consecutive "
                "identical call; 200 identical calls in a window of 10 (cannot fire); "
                "recovery note after 15 consecutive tool rounds"
            ),
            # Not replayed: the thinking-loop and reasoning-stall detectors (no reasoning
            # text recorded), the streamed-text loop (no streamed replies), the cross-turn
            # repeated answer (one turn per trajectory); max_tool_repeat_total is off by
            # default.
        ),
    ]
}


def describe(firings: Sequence[BaselineFiring]) -> dict[str, Any]:
    """Counts per rule and action, for reports."""
    return dict(Counter(f"{f.rule}:{f.action}" for f in firings))
