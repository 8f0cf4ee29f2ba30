"""What the guard records of a turn, for the judge's summary.

The record is kept incrementally (O(1) per tool result, bounded memory for what
the summary shows), so building a summary costs the same at call 10 and at call
10,000.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from caretz.guard.model import ToolObservation, TurnContext, Verdict
from caretz.guard.normalize import (
    call_signature,
    error_line,
    failure_fingerprint,
    normalize_output,
    tool_label,
)
from caretz.guard.progress import ProgressTracker
from caretz.messages import Message, Usage
from caretz.plan import PLAN_TOOL, Plan, read_plan
from caretz.text import one_line, shorten
from caretz.tools.policy import path_arguments

LAST_CALLS = 12
LAST_MESSAGES = 4
TOP_FAILURES = 3
TOP_REPEATED_CALLS = 5

_ARGS_CHARS = 240
_EXAMPLE_CHARS = 900
_EXAMPLE_LINES = 14


class TopCounts:
    """Counts keys and keeps the `size` most frequent at hand, in O(size) per add.

    Counts only grow, so a key can only enter the top by passing its smallest member.
    """

    def __init__(self, size: int):
        self.size = size
        self.counts: dict[Any, int] = {}
        self.top: dict[Any, int] = {}

    def add(self, key: Any) -> tuple[int, bool]:
        """Count `key`; returns its count and whether it has just entered the top."""
        count = self.counts.get(key, 0) + 1
        self.counts[key] = count
        if key in self.top:
            self.top[key] = count
            return count, False
        if len(self.top) < self.size:
            self.top[key] = count
            return count, True
        weakest = min(self.top, key=self.top.__getitem__)
        if count <= self.top[weakest]:
            return count, False
        del self.top[weakest]
        self.top[key] = count
        return count, True

    def ranked(self) -> list[tuple[Any, int]]:
        return sorted(self.top.items(), key=lambda item: -item[1])


@dataclass
class FailureExample:
    first_step: int
    last_step: int
    raw: str  # one raw output excerpt around the telling line


@dataclass(kw_only=True)
class CallOutcomes:
    """What one call (tool and arguments) returned each time it ran, normalized."""

    last: bytes  # digest of the latest result (status and normalized output)
    same: int = 1  # calls in a row, up to the latest, that returned exactly that
    distinct: int = 1  # different results seen (counted up to MAX_DISTINCT)
    ok: bool = True  # the latest result was a success
    seen: set[bytes] = field(default_factory=set)

    def add(self, digest: bytes, ok: bool) -> None:
        self.same = self.same + 1 if digest == self.last else 1
        if digest not in self.seen and len(self.seen) < MAX_DISTINCT:
            self.seen.add(digest)
            self.distinct = len(self.seen)
        self.last, self.ok = digest, ok


MAX_DISTINCT = 8


@dataclass
class VerdictEntry:
    step: int | None
    headline: str
    verdict: Verdict
    error: str | None


@dataclass(kw_only=True)
class TurnRecord:
    """Everything the guard has seen this turn that the summary may show."""

    ctx: TurnContext
    clock: Callable[[], float]
    started_at: float
    calls: int = 0
    failures: int = 0
    usage: Usage = field(default_factory=Usage)
    per_tool: Counter[str] = field(default_factory=Counter)
    last_calls: deque[ToolObservation] = field(default_factory=lambda: deque(maxlen=LAST_CALLS))
    messages: deque[tuple[int, str]] = field(default_factory=lambda: deque(maxlen=LAST_MESSAGES))
    verdicts: list[VerdictEntry] = field(default_factory=list)
    failure_counts: TopCounts = field(default_factory=lambda: TopCounts(TOP_FAILURES))
    failure_examples: dict[str, FailureExample] = field(default_factory=dict)
    failure_first_step: dict[str, int] = field(default_factory=dict)
    call_counts: TopCounts = field(default_factory=lambda: TopCounts(TOP_REPEATED_CALLS))
    call_labels: dict[bytes, str] = field(default_factory=dict)
    call_outcomes: dict[bytes, CallOutcomes] = field(default_factory=dict)  # repeated calls
    files_touched: dict[str, None] = field(default_factory=dict)  # ordered set, newest last
    files_edited: dict[str, int] = field(default_factory=dict)  # edits per file, newest last
    plan: Plan = ()  # the agent's plan: as the turn started, then its latest `todo` list
    progress: ProgressTracker = field(default_factory=ProgressTracker)

    @classmethod
    def start(cls, ctx: TurnContext, clock: Callable[[], float]) -> TurnRecord:
        return cls(ctx=ctx, clock=clock, started_at=clock(), plan=ctx.plan)

    # -- recording ----------------------------------------------------------------
    def add_call(self, obs: ToolObservation) -> None:
        self.calls += 1
        self.progress.observe(obs)
        self.per_tool[obs.tool] += 1
        self.last_calls.append(obs)
        self._count_call(obs)
        for path in _paths(obs.args):
            _touch(self.files_touched, path)
        for path in obs.files_changed:
            _touch(self.files_touched, path)
            self.files_edited[path] = self.files_edited.pop(path, 0) + 1
        if obs.failed is True:
            self.failures += 1
            self._count_failure(obs)
        elif obs.tool == PLAN_TOOL:
            self._update_plan(obs.args)

    def add_response(self, message: Message, usage: Usage) -> None:
        self.usage = self.usage + usage
        if message.content.strip():
            self.messages.append((self.calls, message.content.strip()))

    def add_verdict(
        self, step: int | None, headline: str, verdict: Verdict, error: str | None
    ) -> None:
        self.verdicts.append(VerdictEntry(step, headline, verdict, error))

    def _update_plan(self, args: dict[str, Any]) -> None:
        with contextlib.suppress(ValueError):  # the tool refused it too: the plan stands
            self.plan = read_plan(args)

    @property
    def successes(self) -> int:
        return self.calls - self.failures

    def _count_call(self, obs: ToolObservation) -> None:
        key = _call_key(obs.tool, obs.args)
        _, entered = self.call_counts.add(key)
        if entered:
            self.call_labels[key] = call_label(obs.tool, obs.args)
            # Labels only for the keys on show: memory stays bounded.
            for stale in [k for k in self.call_labels if k not in self.call_counts.top]:
                del self.call_labels[stale]
                self.call_outcomes.pop(stale, None)
        if key in self.call_labels:
            self._count_outcome(key, obs)

    def _count_outcome(self, key: bytes, obs: ToolObservation) -> None:
        """Whether a repeated call keeps returning the same thing (waiting, polling)."""
        digest = _result_digest(obs)
        outcomes = self.call_outcomes.get(key)
        if outcomes is None:
            self.call_outcomes[key] = CallOutcomes(last=digest, ok=obs.failed is not True,
                                                   seen={digest})  # fmt: skip
        else:
            outcomes.add(digest, obs.failed is not True)

    def _count_failure(self, obs: ToolObservation) -> None:
        fingerprint = failure_fingerprint(obs)
        first_step = self.failure_first_step.setdefault(fingerprint, obs.index)
        _, entered = self.failure_counts.add(fingerprint)
        example = self.failure_examples.get(fingerprint)
        if example is not None:
            example.last_step = obs.index
        elif entered:
            self.failure_examples[fingerprint] = FailureExample(
                first_step, obs.index, _excerpt(obs.output)
            )
        for stale in [k for k in self.failure_examples if k not in self.failure_counts.top]:
            del self.failure_examples[stale]


def _touch(ordered: dict[str, None], path: str) -> None:
    ordered.pop(path, None)
    ordered[path] = None


def _paths(args: dict[str, Any]) -> list[str]:
    paths = path_arguments(args)
    many = args.get("paths")
    if isinstance(many, list):
        paths.extend(p for p in many if isinstance(p, str))
    return paths


def _call_key(tool: str, args: dict[str, Any]) -> bytes:
    """The call's signature, hashed: memory stays small however long the arguments."""
    return hashlib.blake2b(call_signature(tool, args).encode(), digest_size=16).digest()


def _result_digest(obs: ToolObservation) -> bytes:
    status = {True: b"failed", False: b"ok", None: b"?"}[obs.failed]
    text = normalize_output(obs.output).encode()
    return hashlib.blake2b(status + b"\x00" + text, digest_size=16).digest()


def call_label(tool: str, args: dict[str, Any]) -> str:
    """A call in one short line: `Bash go test ./...`, `Edit {"path":"db.go",...}`."""
    command = args.get("command")
    if isinstance(command, str) and len(args) <= 2:
        return f"{tool_label(tool)} {one_line(command, _ARGS_CHARS)}"
    shortened = {
        key: shorten(value, 80) if isinstance(value, str) else value for key, value in args.items()
    }
    encoded = json.dumps(shortened, sort_keys=True, separators=(",", ":"), default=str)
    return f"{tool_label(tool)} {shorten(encoded, _ARGS_CHARS)}"


def _excerpt(output: str) -> str:
    """A few raw lines ending just after the telling line."""
    lines = output.splitlines()
    telling = error_line(output)
    end = len(lines)
    for position in range(len(lines) - 1, -1, -1):
        if telling and lines[position].strip() == telling:
            end = min(len(lines), position + 3)
            break
    chosen = [line.rstrip() for line in lines[max(0, end - _EXAMPLE_LINES) : end]]
    text = "\n".join(chosen).strip("\n")
    return text if len(text) <= _EXAMPLE_CHARS else "…" + text[-_EXAMPLE_CHARS:]
