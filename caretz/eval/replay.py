"""Replay recorded trajectories through the loop guard, in shadow mode (or active).

Two inputs are understood, detected per file:

- the trajectory corpus format: one JSON object a line with `id`, `task`,
  `steps[{tool, args, output, failed}]` and an optional `label`;
- a caretz session log (`events.jsonl`, or the session folder holding it):
  every turn becomes one trajectory named `<session>#turnN`.

Replay never changes a decision (the guard runs in shadow mode) and, unless a
judge is given, makes no model calls: `NoJudge` answers "not stuck", so the
firings show where the guard would have asked a judge.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from caretz.guard.config import LoopGuardConfig
from caretz.guard.guard import LoopGuard
from caretz.guard.judge import NoJudge
from caretz.guard.model import Judge, Mode, ToolObservation, TurnContext
from caretz.messages import Message, ToolCall, Usage
from caretz.session.records.base import LoopRecord, Record
from caretz.session.records.guard import LoopGuardFired, LoopGuardJudged, LoopGuardJudging
from caretz.session.records.loop import ModelReplied, ToolCalled, ToolReturned, TurnStarted
from caretz.session.records.parse import parse_record

# Corpus tool names → caretz tool names, where the match is obvious. The corpus
# name is kept in the arguments under CORPUS_TOOL_KEY.
CORPUS_TOOL_NAMES: dict[str, str] = {
    "bash": "bash",
    "edit": "edit",
    "create": "write",
    "read": "read",
    "search": "grep",
}
CORPUS_TOOL_KEY = "corpus_tool"
SESSION_LOG_NAME = "events.jsonl"


class TrajectoryError(Exception):
    """A trajectory file cannot be read; the message names the file and line."""


@dataclass(frozen=True, kw_only=True)
class Step:
    tool: str
    args: dict[str, Any]
    output: str
    failed: bool | None  # None: unknown (no exit code was recorded)
    call_id: str = ""
    exit_code: int | None = None
    duration_s: float = 0.0
    files_changed: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReplayedResponse:
    """An assistant response, fed to the guard just before step `before_step`."""

    before_step: int
    message: Message
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True, kw_only=True)
class Trajectory:
    id: str
    task: str
    steps: list[Step]
    responses: list[ReplayedResponse] = field(default_factory=list)
    final_text: str = ""
    label: dict[str, Any] | None = None  # corpus labels: {stuck, first_stuck_step, ...}
    model_ref: str = "unknown"
    source: str = ""  # the file it was read from


# ---------------------------------------------------------------- loading


def load_trajectories(path: Path) -> list[Trajectory]:
    """Every trajectory in a corpus file, a session log, or a session folder."""
    if path.is_dir():
        path = path / SESSION_LOG_NAME
    if not path.is_file():
        raise TrajectoryError(f"{path}: no such file")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise TrajectoryError(f"{path}: cannot be read ({exc})") from exc
    records = list(_parse_lines(path, lines))
    if not records:
        return []
    first = records[0][1]
    if "steps" in first:
        return [_corpus_trajectory(path, number, record) for number, record in records]
    if "type" in first:
        return _session_trajectories(path, [parse_record(record) for _, record in records])
    raise TrajectoryError(
        f"{path}:{records[0][0]}: neither a corpus trajectory (no 'steps') "
        "nor a session event (no 'type')"
    )


def load_all(paths: Iterable[Path]) -> list[Trajectory]:
    return [trajectory for path in paths for trajectory in load_trajectories(path)]


def _parse_lines(path: Path, lines: list[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    last = max((n for n, line in enumerate(lines, 1) if line.strip()), default=0)
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            if number == last and path.name == SESSION_LOG_NAME:
                return  # a session killed mid-write leaves a torn last line
            raise TrajectoryError(f"{path}:{number}: not a JSON object ({exc.msg})") from exc
        if not isinstance(record, dict):
            raise TrajectoryError(f"{path}:{number}: not a JSON object")
        yield number, record


def _corpus_trajectory(path: Path, number: int, record: dict[str, Any]) -> Trajectory:
    where = f"{path}:{number}"
    steps = record.get("steps")
    if not isinstance(steps, list):
        raise TrajectoryError(f"{where}: 'steps' must be a list")
    meta = record.get("meta") or {}
    return Trajectory(
        id=str(record.get("id") or f"{path.name}:{number}"),
        task=str(record.get("task") or ""),
        steps=[_corpus_step(f"{where}: step {i}", step) for i, step in enumerate(steps)],
        label=record.get("label"),
        model_ref=str(meta.get("model") or "unknown"),
        source=str(path),
    )


def _corpus_step(where: str, step: Any) -> Step:
    if not isinstance(step, dict) or not isinstance(step.get("tool"), str):
        raise TrajectoryError(f"{where}: each step needs a 'tool' name")
    args = step.get("args") or {}
    if not isinstance(args, dict):
        raise TrajectoryError(f"{where}: 'args' must be an object")
    failed = step.get("failed")
    if failed is not None and not isinstance(failed, bool):
        raise TrajectoryError(f"{where}: 'failed' must be true, false or null")
    original: str = step["tool"]
    tool = CORPUS_TOOL_NAMES.get(original, original)
    if tool != original:
        args = {**args, CORPUS_TOOL_KEY: original}
    return Step(tool=tool, args=args, output=str(step.get("output") or ""), failed=failed)


@dataclass(kw_only=True)
class _TurnBuilder:
    id: str
    task: str = ""
    model_ref: str = "unknown"
    steps: list[Step] = field(default_factory=list)
    responses: list[ReplayedResponse] = field(default_factory=list)
    calls: dict[str, ToolCall] = field(default_factory=dict)  # by call id, and by "#index"
    final_text: str = ""


def _session_trajectories(path: Path, events: list[Record]) -> list[Trajectory]:
    session = path.parent.name if path.name == SESSION_LOG_NAME else str(path)
    turns: dict[tuple[str, int], _TurnBuilder] = {}
    for event in events:
        if not isinstance(event, LoopRecord) or not isinstance(event.turn, int):
            continue
        number, agent = event.turn, str(event.agent or "main")
        key = (agent, number)
        if key not in turns:
            prefix = "" if agent == "main" else f"{agent}:"
            turns[key] = _TurnBuilder(id=f"{session}#{prefix}turn{number}")
        _apply_event(turns[key], event)
    return [
        Trajectory(
            id=turn.id,
            task=turn.task,
            steps=turn.steps,
            responses=turn.responses,
            final_text=turn.final_text,
            model_ref=turn.model_ref,
            source=str(path),
        )
        for turn in turns.values()
    ]


def _apply_event(turn: _TurnBuilder, event: LoopRecord) -> None:
    if isinstance(event, TurnStarted):
        turn.task = str(event.prompt or "")
        turn.model_ref = str(event.model or turn.model_ref)
    elif isinstance(event, ModelReplied):
        message = Message.from_dict(event.message or {"role": "assistant"})
        usage = Usage.from_dict(event.usage or {})
        turn.responses.append(ReplayedResponse(len(turn.steps), message, usage))
        for call in message.tool_calls:
            turn.calls[call.id] = call
        if not message.tool_calls:
            turn.final_text = message.content
    elif isinstance(event, ToolCalled) and isinstance(event.call, dict):
        call = ToolCall.from_dict({"id": "", "name": "unknown", **event.call})
        turn.calls[call.id] = call
        turn.calls[f"#{event.index}"] = call
    elif isinstance(event, ToolReturned):
        turn.steps.append(_session_step(turn, event))


def _session_step(turn: _TurnBuilder, event: ToolReturned) -> Step:
    call_id = str(event.call_id or "")
    call = turn.calls.get(call_id) or turn.calls.get(f"#{event.index}")
    seen = ToolObservation.from_record(event, call)
    return Step(
        tool=seen.tool,
        args=seen.args,
        output=seen.output,
        failed=seen.failed,
        call_id=call_id,
        exit_code=seen.exit_code,
        duration_s=seen.duration_s,
        files_changed=seen.files_changed,
    )


# ---------------------------------------------------------------- replay


@dataclass(kw_only=True)
class FiringRecord:
    step: int  # 0-based index into the trajectory's steps
    trigger: str  # the detector that fired ("repeat", "check-every", "identical-call", ...)
    fingerprint: str
    severity: str  # "judge", "warn", "block" or "stop"
    headline: str = ""
    verdict: dict[str, Any] | None = None  # the judge's verdict, when one was asked

    def to_json(self, trajectory_id: str) -> dict[str, Any]:
        data: dict[str, Any] = {
            "trajectory": trajectory_id,
            "step": self.step,
            "trigger": self.trigger,
            "fingerprint": self.fingerprint,
            "severity": self.severity,
        }
        if self.verdict is not None:
            data["verdict"] = self.verdict
        return data


@dataclass(frozen=True)
class Replayed:
    """A record the guard wrote during a replay, and the step it was at."""

    step: int
    record: Record

    @property
    def at(self) -> int:
        """The step the record names, else the one the replay was at."""
        step = getattr(self.record, "step", None)
        return step if isinstance(step, int) else self.step


@dataclass(kw_only=True)
class ReplayResult:
    trajectory: Trajectory
    firings: list[FiringRecord] = field(default_factory=list)
    judged: list[Replayed] = field(default_factory=list)  # the LoopGuard.Judged records
    judge_calls: int = 0
    events: list[Replayed] = field(default_factory=list)  # every guard record

    @property
    def triggered(self) -> bool:
        return bool(self.firings)

    @property
    def first_trigger_step(self) -> int | None:
        return min((f.step for f in self.firings), default=None)

    def trigger_counts(self) -> dict[str, int]:
        return dict(Counter(f.trigger for f in self.firings))

    def summary_json(self) -> dict[str, Any]:
        return {
            "trajectory": self.trajectory.id,
            "summary": True,
            "triggered": self.triggered,
            "first_trigger_step": self.first_trigger_step,
            "triggers": self.trigger_counts(),
        }


class _ReplayClock:
    """Time as the recording saw it: each step advances by its recorded duration."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def replay_config(config: LoopGuardConfig, mode: Mode = "shadow") -> LoopGuardConfig:
    """The same settings, observing only (or in `mode`), and watching whatever model
    was recorded."""
    return config.model_copy(update={"mode": mode, "models": None})


def replay(
    trajectory: Trajectory,
    config: LoopGuardConfig,
    judge: Judge | None = None,
    mode: Mode = "shadow",
) -> ReplayResult:
    """Feed one trajectory to a LoopGuard (in shadow mode unless `mode` says
    otherwise); collect every firing.

    In active mode the guard's decisions (LoopGuard.Redirected, LoopGuard.Stopped)
    are among the events; the recorded steps still all play, as they were recorded,
    and after a stop the guard watches nothing more.
    """
    result = ReplayResult(trajectory=trajectory)
    clock = _ReplayClock()
    recorder = _Recorder(result, clock, keep_verdicts=judge is not None)
    guard = LoopGuard(replay_config(config, mode), judge or NoJudge(), recorder.emit, clock=clock)
    guard.begin_turn(TurnContext(task=trajectory.task, model_ref=trajectory.model_ref))
    responses = _responses_by_step(trajectory)
    for index, step in enumerate(trajectory.steps):
        recorder.step = index
        for response in responses.get(index, []):
            guard.after_response(response.message, response.usage)
        call = ToolCall(id=step.call_id or f"replay-{index}", name=step.tool, arguments=step.args)
        guard.before_tool(call)
        clock.now += step.duration_s
        guard.after_tool(_observation(index, step))
    recorder.step = max(len(trajectory.steps) - 1, 0)
    for response in responses.get(len(trajectory.steps), []):
        guard.after_response(response.message, response.usage)
    guard.end_turn(trajectory.final_text)
    return result


def replay_all(
    trajectories: Iterable[Trajectory], config: LoopGuardConfig, judge: Judge | None = None
) -> list[ReplayResult]:
    return [replay(trajectory, config, judge) for trajectory in trajectories]


def _responses_by_step(trajectory: Trajectory) -> dict[int, list[ReplayedResponse]]:
    grouped: dict[int, list[ReplayedResponse]] = {}
    for response in trajectory.responses:
        grouped.setdefault(response.before_step, []).append(response)
    return grouped


def _observation(index: int, step: Step) -> ToolObservation:
    return ToolObservation(
        index=index,
        tool=step.tool,
        args=step.args,
        output=step.output,
        failed=step.failed,
        exit_code=step.exit_code,
        duration_s=step.duration_s,
        files_changed=step.files_changed,
    )


class _Recorder:
    """The guard's `emit`: keeps every event and turns firings and verdicts into records."""

    def __init__(self, result: ReplayResult, clock: Callable[[], float], keep_verdicts: bool):
        self.result = result
        self.keep_verdicts = keep_verdicts  # without a judge, every "verdict" is the no-op one
        self.step = 0
        self._clock = clock

    def emit(self, record: Record) -> Record:
        record = dataclasses.replace(record, ts=self._clock())
        replayed = Replayed(self.step, record)
        self.result.events.append(replayed)
        if isinstance(record, LoopGuardFired):
            self._fired(replayed, record)
        elif isinstance(record, LoopGuardJudging):
            self.result.judge_calls += 1
        elif isinstance(record, LoopGuardJudged):
            self.result.judged.append(replayed)
            self._attach_verdict(record)
        return record

    def _fired(self, replayed: Replayed, fired: LoopGuardFired) -> None:
        self.result.firings.append(
            FiringRecord(
                step=replayed.at,
                trigger=str(fired.detector or "unknown"),
                fingerprint=str(fired.fingerprint or ""),
                severity=str(fired.severity or "judge"),
                headline=str(fired.headline or ""),
            )
        )

    def _attach_verdict(self, judged: LoopGuardJudged) -> None:
        """One judge call answers for every firing it was asked about."""
        verdict = judged.verdict
        if not self.keep_verdicts or not isinstance(verdict, dict):
            return
        asked = set(judged.triggers or [judged.headline])
        waiting = [f for f in self.result.firings if f.verdict is None and f.severity == "judge"]
        targets = [f for f in waiting if f.headline in asked] or waiting[-1:]
        for firing in targets:
            firing.verdict = {**verdict, "model": judged.model, "error": judged.error}
