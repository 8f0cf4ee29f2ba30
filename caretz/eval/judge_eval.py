"""Judging the judge: replay labelled trajectories and ask a judge model at every firing.

Each trajectory plays twice through the real guard:

- in shadow mode, so the judge is asked at every place the guard would ask it,
  with exactly the summary the guard builds there (earlier verdicts included);
  these answers are what gets scored;
- in active mode, with the same answers, for what the guard would have done:
  the first stuck verdict (or stop-level detector) redirects, a later one stops.
  The recording plays on after a redirect as it was recorded: the agent in it
  never saw the note, so the stop is where the guard would end a loop that the
  note did not break.

Up to the stop both replays build the same summaries, so the active one is
answered from memory. Trajectories run `concurrency` at a time; within one the
calls follow each other, since each summary lists the verdicts before it.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from caretz.eval.labels import Labelled
from caretz.eval.replay import Replayed, ReplayResult, replay
from caretz.eval.verdict_cache import VerdictCache, cache_key, worth_keeping
from caretz.guard.config import LoopGuardConfig
from caretz.guard.model import Judge, JudgeResult, Verdict
from caretz.messages import Usage
from caretz.session.records.guard import LoopGuardJudged, LoopGuardRedirected, LoopGuardStopped

CANCELLED = "cancelled"
_POLL_S = 0.2  # how often the waiting thread looks up, so Ctrl-C is seen at once

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True, kw_only=True)
class JudgedCall:
    """One judge call the guard made, and its answer."""

    step: int
    trigger: str
    headline: str
    verdict: Verdict  # as the judge answered (an error: "not stuck")
    unsure: bool  # "stuck" below judge.minConfidence: the guard carries on
    error: str | None
    latency_s: float
    usage: Usage
    cached: bool  # answered from the verdict cache, not asked in this run


@dataclass(kw_only=True)
class TrajectoryRun:
    labelled: Labelled
    calls: list[JudgedCall]
    redirect_step: int | None = None  # active mode: where the guard redirected
    stop_step: int | None = None  # and where it ended the turn
    redirect_by: str = ""  # the trigger or detector that led to it
    stop_by: str = ""


class Answers:
    """Where the judge's answers come from: memory, then the cache, then the judge."""

    def __init__(
        self,
        judge: Judge,
        judge_settings: Mapping[str, Any],  # what identifies this judge, for the cache key
        cache: VerdictCache | None = None,
    ):
        self.judge = judge
        self.judge_settings = judge_settings
        self.cache = cache
        self.cancelled = threading.Event()  # set on Ctrl-C: no new question is asked
        self._memo: dict[str, JudgeResult] = {}
        self._lock = threading.Lock()

    def asker(self) -> ReplayJudge:
        return ReplayJudge(self)

    def answer(self, summary: str, timeout_s: float) -> tuple[JudgeResult, str]:
        """The answer, and where it came from: "memo", "cache", "judge" or CANCELLED."""
        key = cache_key(summary, self.judge_settings)
        with self._lock:
            known = self._memo.get(key)
        if known is not None:
            return known, "memo"
        stored = self.cache.get(key) if self.cache is not None else None
        if stored is not None:
            self._remember(key, stored)
            return stored, "cache"
        if self.cancelled.is_set():
            return JudgeResult.no_verdict("-", 0.0, CANCELLED), CANCELLED
        result = self.judge(summary, timeout_s)
        self._remember(key, result)
        if self.cache is not None and worth_keeping(result):
            self.cache.put(key, result)
        return result, "judge"

    def _remember(self, key: str, result: JudgeResult) -> None:
        with self._lock:
            self._memo[key] = result


class ReplayJudge:
    """The judge as one replay sees it; notes where each answer came from, in order."""

    def __init__(self, answers: Answers):
        self.answers = answers
        self.sources: list[str] = []

    def __call__(self, summary: str, timeout_s: float) -> JudgeResult:
        try:
            result, source = self.answers.answer(summary, timeout_s)
        except Exception:
            # The guard counts it as a failed call (LoopGuard.Judged with the error).
            self.sources.append("judge")
            raise
        self.sources.append(source)
        return result

    @property
    def cancelled(self) -> bool:
        return CANCELLED in self.sources


def judge_trajectory(
    labelled: Labelled, config: LoopGuardConfig, answers: Answers
) -> TrajectoryRun | None:
    """Both replays of one trajectory; None when cancelled before all its answers came."""
    shadow_asker = answers.asker()
    shadow = replay(labelled.trajectory, config, shadow_asker, mode="shadow")
    if shadow_asker.cancelled:
        return None
    active_asker = answers.asker()
    active = replay(labelled.trajectory, config, active_asker, mode="active")
    if active_asker.cancelled:
        return None
    run = TrajectoryRun(labelled=labelled, calls=_calls(shadow, shadow_asker.sources))
    _outcome(run, active)
    return run


def _calls(result: ReplayResult, sources: Sequence[str]) -> list[JudgedCall]:
    # One LoopGuard.Judged event per judge call, in the order the judge was asked.
    assert len(result.judged) == len(sources), "a judge call without its Judged event"
    return [_call(event, source) for event, source in zip(result.judged, sources, strict=True)]


def _call(replayed: Replayed, source: str) -> JudgedCall:
    event = cast(LoopGuardJudged, replayed.record)
    verdict = event.verdict or {}
    return JudgedCall(
        step=replayed.at,
        trigger=str(event.trigger or ""),
        headline=str(event.headline or ""),
        verdict=Verdict(
            stuck=bool(verdict.get("stuck")),
            confidence=float(verdict.get("confidence") or 0.0),
            reason=str(verdict.get("reason") or ""),
            try_instead=str(verdict.get("try_instead") or ""),
        ),
        unsure=bool(event.unsure),
        error=event.error,
        latency_s=float(event.latency_s or 0.0),
        usage=Usage.from_dict(event.usage or {}),
        cached=source != "judge",
    )


def _outcome(run: TrajectoryRun, active: ReplayResult) -> None:
    for replayed in active.events:
        event = replayed.record
        if isinstance(event, LoopGuardRedirected) and run.redirect_step is None:
            run.redirect_step, run.redirect_by = replayed.at, str(event.detector)
        elif isinstance(event, LoopGuardStopped) and run.stop_step is None:
            run.stop_step, run.stop_by = replayed.at, str(event.detector)


def judge_all(
    items: Sequence[Labelled],
    config: LoopGuardConfig,
    answers: Answers,
    concurrency: int = 1,
    on_done: Callable[[TrajectoryRun], None] = lambda run: None,
) -> list[TrajectoryRun]:
    """Every trajectory's run, in the order given. On KeyboardInterrupt the answers
    stop being asked for and the runs finished so far are kept in
    `PartialRun.runs` of the PartialRun raised."""
    finished: dict[int, TrajectoryRun] = {}

    def work(index: int) -> TrajectoryRun | None:
        return judge_trajectory(items[index], config, answers)

    try:
        for index, run in in_parallel(range(len(items)), work, concurrency, answers.cancelled):
            if run is not None:
                finished[index] = run
                on_done(run)
    except KeyboardInterrupt:
        answers.cancelled.set()
        raise PartialRun([finished[i] for i in sorted(finished)]) from None
    return [finished[i] for i in sorted(finished)]


class PartialRun(Exception):
    """Ctrl-C: the runs that finished before it."""

    def __init__(self, runs: list[TrajectoryRun]):
        super().__init__(f"interrupted after {len(runs)} trajectories")
        self.runs = runs


def in_parallel(
    items: Sequence[T],
    work: Callable[[T], R],
    concurrency: int,
    cancelled: threading.Event,
) -> Iterator[tuple[T, R]]:
    """(item, work(item)) as each finishes, `concurrency` at a time.

    The workers are daemon threads: a judge call blocked in the network never
    keeps the process from exiting after Ctrl-C. Once `cancelled` is set they
    take no new item. An exception in `work` is raised here.
    """
    todo: queue.Queue[T] = queue.Queue()
    for item in items:
        todo.put(item)
    done: queue.Queue[tuple[T, R | None, BaseException | None]] = queue.Queue()

    def worker() -> None:
        while not cancelled.is_set():
            try:
                item = todo.get_nowait()
            except queue.Empty:
                return
            try:
                done.put((item, work(item), None))
            except BaseException as error:  # handed to the waiting thread
                done.put((item, None, error))

    for number in range(max(1, min(concurrency, len(items)))):
        threading.Thread(target=worker, name=f"caretz-eval-{number}", daemon=True).start()
    for _ in range(len(items)):
        finished = _next(done, cancelled)
        if finished is None:
            return  # cancelled: what is still running is not waited for
        item, result, error = finished
        if error is not None:
            raise error
        yield item, result


def _next(done: queue.Queue[Any], cancelled: threading.Event) -> Any:
    while not cancelled.is_set():
        try:
            return done.get(timeout=_POLL_S)
        except queue.Empty:
            continue
    return None
