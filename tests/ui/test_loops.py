"""/loop's schedule: intervals, what is due, and when the next run comes."""

from __future__ import annotations

import pytest

from caretz.ui.loops import LoopSchedule, interval_text, parse_interval
from caretz.ui.slash import find


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("text", "seconds"), [("30s", 30), ("10m", 600), ("2h", 7200), ("1h30m", 5400), ("1d", 86400)]
)
def test_intervals(text: str, seconds: float):
    assert parse_interval(text) == seconds
    assert interval_text(seconds) == text


@pytest.mark.parametrize("text", ["", "10", "10x", "m10", "5m junk", "0s", "500ms"])
def test_a_bad_interval_is_refused(text: str):
    with pytest.raises(ValueError):
        parse_interval(text)


def test_a_loop_is_due_at_once_then_every_interval_after_each_run_starts():
    clock = Clock()
    schedule = LoopSchedule(clock)
    loop = schedule.add("10m", " is CI green yet? ")

    assert schedule.due() is loop and loop.prompt == "is CI green yet?"
    schedule.ran(loop, started=100.0)
    clock.now = 130.0
    assert schedule.due() is None
    assert schedule.describe(loop) == "loop 1 · every 10m · next in 9m30s · 1 run"
    clock.now = 700.0
    assert schedule.due() is loop


def test_a_run_longer_than_the_interval_does_not_queue_make_up_runs():
    clock = Clock()
    schedule = LoopSchedule(clock)
    loop = schedule.add("1m", "check")
    clock.now = 400.0  # the run took 5 minutes
    schedule.ran(loop, started=100.0)

    assert loop.next_at == 460.0


def test_loops_are_numbered_stopped_by_number_and_need_a_prompt():
    schedule = LoopSchedule(Clock())
    first = schedule.add("1m", "a")
    second = schedule.add("2m", "b")

    assert (first.number, second.number) == (1, 2)
    assert schedule.stop(1) is first
    assert [loop.number for loop in schedule.loops] == [2]
    with pytest.raises(KeyError):
        schedule.stop(1)
    with pytest.raises(ValueError, match="needs a prompt"):
        schedule.add("1m", "  ")


def test_slash_loop_is_its_own_command_beside_loop_guard():
    loop, guard = find("loop"), find("loop-guard")
    assert loop is not None and guard is not None
    assert (loop.name, guard.name) == ("loop", "loop-guard")
    assert find("goal") is not None and find("goal").name == "goal"  # type: ignore[union-attr]
