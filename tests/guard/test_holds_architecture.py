"""What a "not stuck" verdict holds is decided in one place, `guard/holds.py`.

A check says what it counts (`Firing.pattern`, `Firing.size`) and restarts its own
counts after a verdict; it never keeps a hold of its own that could outlast the
guard's rule (doubling, or the cap of calls). These tests fail when new code goes
around that.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import textwrap

import caretz.guard
from caretz.guard.detector import Detector

# Checks that add to the guard's hold in their own terms, and why.
OWN_HOLDS = {
    # A cycle judged "not stuck": while it replays, its calls are not also counted
    # as spread-out repeats (the cycle's own hold is the guard's).
    "IdenticalCallDetector",
    # Its stretch without progress waits twice as long after "not stuck", until a
    # call shows progress (a shorter wait than the guard's cap never outlasts it).
    "NoProgressDetector",
}


def detector_classes() -> list[type[Detector]]:
    for module in pkgutil.iter_modules(caretz.guard.__path__, "caretz.guard."):
        importlib.import_module(module.name)
    found, pending = [], list(Detector.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.__module__.startswith("caretz.guard."):
            found.append(cls)
    return found


def test_the_guards_checks_are_all_found():
    names = {cls.__name__ for cls in detector_classes()}
    assert {"RepeatTrigger", "CheckEveryTrigger", "AlternationDetector", "RoundsDetector"} <= names


def test_no_check_keeps_a_hold_of_its_own_beyond_the_listed_ones():
    own = {cls.__name__ for cls in detector_classes() if "hold" in vars(cls)}
    assert own <= OWN_HOLDS, (
        f"{sorted(own - OWN_HOLDS)} keep holds of their own: report the pattern and its "
        "size on the Firing (pattern, size, hold_until) and let guard/holds.py hold it"
    )


def test_no_check_reads_what_the_judge_answered():
    """A check restarts its counts after any verdict; only guard/holds.py acts on a
    "not stuck" answer, so no check can turn one into a hold that never expires."""
    for cls in detector_classes():
        method = vars(cls).get("after_verdict")
        if method is None:
            continue
        tree = ast.parse(textwrap.dedent(inspect.getsource(method)))
        function = tree.body[0]
        assert isinstance(function, ast.FunctionDef)
        verdict = function.args.args[2].arg
        used = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == verdict]
        assert not used, f"{cls.__name__}.after_verdict reads the verdict"
