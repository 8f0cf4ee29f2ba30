"""A job's last run, found in the session store.

A scheduled run records `Schedule.Run` (its job's ID) right after its session
starts, so the sessions are searched newest first, reading only their first
events, until each job has been found.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass

from caretz.session.events import read_events
from caretz.session.records.base import Record
from caretz.session.records.goal import GoalEnded, GoalPaused
from caretz.session.records.loop import TurnEnded
from caretz.session.records.session import ScheduleRun, SessionStarted
from caretz.session.store import SessionStore

_HEAD_EVENTS = 4  # Session.Started, then Schedule.Run


@dataclass(frozen=True)
class LastRun:
    session_id: str
    started: float  # the session's start, seconds since the epoch
    exit_code: int | None  # None: still running, or killed before it ended
    status: str


def last_runs(store: SessionStore, job_ids: Iterable[str]) -> dict[str, LastRun]:
    wanted = set(job_ids)
    found: dict[str, LastRun] = {}
    for session_id in reversed(store.ids()):
        if not wanted - set(found):
            break
        path = store.events_path(session_id)
        head = list(itertools.islice(read_events(path), _HEAD_EVENTS))
        job = next((e.job for e in head if isinstance(e, ScheduleRun)), None)
        if job in wanted and job not in found:
            found[job] = _run_of(session_id, list(read_events(path)))
    return found


def _run_of(session_id: str, events: list[Record]) -> LastRun:
    started = next((e.ts or 0.0 for e in events if isinstance(e, SessionStarted)), 0.0)
    exit_code: int | None = None
    status = "running or killed"
    for event in events:
        if isinstance(event, GoalPaused):
            exit_code, status = event.exit_code, "paused"
        elif isinstance(event, GoalEnded) or (
            isinstance(event, TurnEnded) and event.agent == "main"
        ):
            exit_code, status = event.exit_code, event.status
    return LastRun(session_id, float(started), exit_code, status)
