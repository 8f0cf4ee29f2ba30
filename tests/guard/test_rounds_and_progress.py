"""Round fingerprints, command lines as they run, and the progress signal."""

from __future__ import annotations

import pytest

from caretz.guard.command_lines import normalize_command
from caretz.guard.config import LoopGuardConfig
from caretz.guard.detectors import build_detectors
from caretz.guard.detectors_config import NoProgressConfig, RoundsConfig
from caretz.guard.model import ToolObservation, TurnContext
from caretz.guard.normalize import call_signature
from caretz.guard.progress import NoProgressDetector, ProgressTracker
from caretz.guard.rounds import RoundsDetector
from caretz.guard.summary import build_summary
from tests.guard.test_verdict_holds import guard_with, play
from tests.scripted import ScriptedJudge

ERROR = "KeyError: 'DATABASE_URL'"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("./run_tests.sh", "run_tests.sh"),
        ("cd . && pytest tests/", "pytest tests/"),
        ("pytest -x -v tests/test_db.py", "pytest tests/test_db.py -x"),
        ("python -m pytest -q --tb=short tests", "python -m pytest tests"),
        ("go test -v -count=1 ./...", "go test -count=1 ./..."),
    ],
)
def test_spellings_that_run_the_same_thing_are_one_call(a, b):
    assert normalize_command(a) == normalize_command(b)
    assert call_signature("bash", {"command": a}) == call_signature("bash", {"command": b})


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("pytest tests/a.py", "pytest tests/b.py"),
        ("pytest -x tests", "pytest tests"),  # -x changes what runs
        ("pytest -k foo tests", "pytest -k bar tests"),
        ("ls | head", "ls | tail"),
        ("go test ./...", "go test ..."),  # only the program's own ./ goes
    ],
)
def test_commands_that_differ_stay_apart(a, b):
    assert normalize_command(a) != normalize_command(b)


def failed(index: int, command: str, output: str) -> ToolObservation:
    return ToolObservation(
        index=index, tool="bash", args={"command": command}, output=output, failed=True, exit_code=1
    )


def ok(index: int, tool: str, args: dict, output: str = "", changed=()) -> ToolObservation:
    return ToolObservation(
        index=index,
        tool=tool,
        args=args,
        output=output,
        failed=False,
        exit_code=0,
        files_changed=tuple(changed),
    )


def slow_cycle(rounds: int) -> list[ToolObservation]:
    """Each round: a failing run (three different commands in turn), a view, an edit."""
    runs = [
        (
            "pytest tests/test_db.py",
            f"E   {ERROR}\nFAILED tests/test_db.py::test_connect - {ERROR}",
        ),
        ("python reproduce.py", f'Traceback (most recent call last):\n  File "r.py"\n{ERROR}'),
        ("pytest -q --tb=no tests/", f"FAILED tests/test_db.py::test_connect - {ERROR}"),
    ]
    observations = []
    for n in range(rounds):
        command, output = runs[n % 3]
        base = len(observations)
        observations.append(failed(base, command, output))
        observations.append(ok(base + 1, "read", {"path": "src/db.py"}, "def connect(): ..."))
        observations.append(
            ok(base + 2, "edit", {"path": "src/db.py", "new": f"v{n}"}, "ok", ["src/db.py"])
        )
    return observations


def test_rounds_that_end_in_one_failure_ask_whatever_the_commands():
    detector = RoundsDetector(RoundsConfig())
    firings = [f for f in map(detector.after_tool, slow_cycle(6)) if f is not None]
    assert [(f.step, f.count) for f in firings] == [(6, 3), (15, 3)]
    assert firings[0].headline == f"rounds: 3 rounds ended in the same failure: {ERROR}"


def test_back_to_back_failures_are_one_round_and_a_new_failure_is_progress():
    detector = RoundsDetector(RoundsConfig())
    same = [failed(i, "pytest", f"E   {ERROR}") for i in range(5)]
    assert [detector.after_tool(o) for o in same] == [None] * 5
    detector = RoundsDetector(RoundsConfig())
    different = [failed(i, "pytest", f"E   KeyError: 'K{i}'") for i in range(0, 12, 2)]
    assert all(detector.after_tool(o) is None for o in different)


def test_rounds_threshold_zero_turns_it_off():
    detector = RoundsDetector(RoundsConfig(threshold=0))
    assert all(detector.after_tool(o) is None for o in slow_cycle(9))


def drift(rounds: int) -> list[ToolObservation]:
    observations = [ok(0, "read", {"path": "src/db.py"}, "def connect(): ...")]
    for n in range(1, rounds + 1):
        name = f"test_x{n}.py"
        observations.append(ok(len(observations), "write", {"path": name, "content": f"#{n}"},
                               f"wrote {name}", [name]))  # fmt: skip
        observations.append(ok(len(observations), "bash", {"command": f"python {name}"},
                               f"{name}: connect() returned None"))  # fmt: skip
    return observations


def test_the_same_reproduction_under_fresh_names_is_no_progress():
    tracker = ProgressTracker()
    shown = [tracker.observe(o) for o in drift(6)]
    # The first read, write and run returned something new; nothing after that.
    assert shown == [True, True, True] + [False] * 10
    assert tracker.task_files == {}
    assert tracker.unused_scratch() == [f"test_x{n}.py" for n in range(1, 7)]


def test_a_converging_test_cycle_keeps_showing_progress():
    tracker = ProgressTracker()
    for n in range(8):
        assert tracker.observe(failed(3 * n, "pytest", f"E   AssertionError: case {n}"))
        tracker.observe(ok(3 * n + 1, "read", {"path": "src/app.py"}, "source"))
        assert tracker.observe(ok(3 * n + 2, "edit", {"path": "src/app.py", "new": f"v{n}"},
                                  "ok", ["src/app.py"]))  # fmt: skip
    assert tracker.since_progress == 0 and tracker.task_files == {"src/app.py": 8}


def test_the_same_edit_again_is_no_progress():
    tracker = ProgressTracker()
    edit = ok(0, "edit", {"path": "a.py", "old": "x", "new": "y"}, "ok", ["a.py"])
    undo = ok(1, "edit", {"path": "a.py", "old": "y", "new": "x"}, "ok", ["a.py"])
    assert [tracker.observe(o) for o in (edit, undo, edit, undo)] == [True, True, False, False]


def test_no_progress_asks_after_a_stretch_that_shows_none_and_doubles_when_held():
    detector = NoProgressDetector(NoProgressConfig(calls=4))
    detector.begin_turn(TurnContext(task="t", model_ref="m"))
    same = [ok(i, "bash", {"command": "git status"}, "clean") for i in range(20)]
    firings = [f for f in map(detector.after_tool, same) if f is not None]
    assert [f.step for f in firings] == [4, 8, 12, 16]
    detector = NoProgressDetector(NoProgressConfig(calls=4))
    steps = []
    for obs in same:
        firing = detector.after_tool(obs)
        if firing is not None:
            steps.append(firing.step)
            detector.hold(firing)  # the judge said "not stuck"
    assert steps == [4, 12]
    assert all(NoProgressDetector(NoProgressConfig(calls=0)).after_tool(o) is None for o in same)


def test_the_new_checks_are_switched_off_with_their_keys():
    config = LoopGuardConfig.model_validate(
        {"detectors": {"rounds": {"enabled": False}, "noProgress": {"calls": 0}}}
    )
    kinds = {type(d) for d in build_detectors(config.detectors)}
    assert RoundsDetector not in kinds
    assert config.detectors.no_progress.calls == 0


def test_the_judge_sees_the_progress_signal_and_the_check_that_fired():
    judge = ScriptedJudge()
    guard, events = guard_with(judge)
    play(guard, drift(6))
    (judging,) = events.of("LoopGuard.Judging")
    assert judging["trigger"] == "no-progress"
    summary = judge.summaries[0]
    assert "## Why you are asked now\n- no-progress: 8 calls in a row changed no task file" in (
        summary
    )
    assert "## Signs of progress" in summary and "Task files changed: none." in summary
    assert "Scratch files created this turn and used at most once: test_x1.py" in summary
    assert "Signs of progress" in build_summary(guard.record)
