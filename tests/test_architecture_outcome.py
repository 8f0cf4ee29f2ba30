"""One result type for how a piece of work ended, held for all of caretz/ by an AST scan.

`caretz/agent/outcomes.py`'s `Outcome` is the one type from the turn loop to the exit
code: `Turn.run` returns it, the app layer and the goal driver pass it up, the Python
API's `RunResult` carries it. A class anywhere else in caretz/ that declares both a
`status` and an `exit_code` (a field, a class attribute, or `self.x = ...` in a method) is
a copy of it coming back, and fails here; `RunResult`'s properties that read the outcome
are no declaration. The few classes that must stay apart are listed with why.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "caretz"

THE_ONE = "agent/outcomes.py:Outcome"

# Classes that hold a status and an exit code outside the running session's work, each
# where the import table keeps `caretz.agent` out of reach.
APART = {
    "session/records/loop.py:TurnEnded": "the log's record of a turn's end, stored as data "
    "(session/records imports nothing but itself)",
    "session/records/goal.py:GoalEnded": "the log's record of a goal's end, stored as data",
    "batch/results.py:TaskResult": "a batch task is a caretz process: its printed result "
    "object read back (batch never imports the session)",
    "schedule/runs.py:LastRun": "a scheduled job's last run, read from its session's log "
    "(schedule imports config and session only)",
}

RESULT_FIELDS = {"status", "exit_code"}


def declared_names(cls: ast.ClassDef) -> set[str]:
    """The attributes `cls` declares: its body's annotated and assigned names, and what
    its methods assign to `self`."""
    names: set[str] = set()
    for statement in cls.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            names.add(statement.target.id)
        elif isinstance(statement, ast.Assign):
            names |= {t.id for t in statement.targets if isinstance(t, ast.Name)}
        elif isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(statement):
                targets = (
                    node.targets
                    if isinstance(node, ast.Assign)
                    else [node.target]
                    if isinstance(node, ast.AnnAssign)
                    else []
                )
                names |= {
                    t.attr
                    for t in targets
                    if isinstance(t, ast.Attribute)
                    and isinstance(t.value, ast.Name)
                    and t.value.id == "self"
                }
    return names


def result_types(tree: ast.AST, where: str) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and declared_names(node) >= RESULT_FIELDS:
            yield f"{where}:{node.name}"


def package_result_types() -> list[str]:
    found: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        found += result_types(ast.parse(path.read_text(encoding="utf-8")), where)
    return found


def test_only_the_outcome_declares_a_status_and_an_exit_code():
    found = package_result_types()
    assert THE_ONE in found  # the scan sees the one type
    copies = [name for name in found if name != THE_ONE and name not in APART]
    assert copies == [], (
        f"{copies} declare both `status` and `exit_code`: carry caretz.agent.outcomes."
        "Outcome instead (the way RunResult does), or list the class in APART with why"
    )
    assert sorted(set(APART) - set(found)) == []  # no exception outlives its class


def test_the_scan_finds_a_copy_in_every_form_it_can_take():
    forms = """
from dataclasses import dataclass

@dataclass
class Fields:
    status: str
    exit_code: int

class ClassAttributes(Exception):
    status = "limit"
    exit_code = 4

class SetInInit:
    def __init__(self, status, code):
        self.status = status
        self.exit_code: int = code

class Mixed:
    status: str = "done"
    def __init__(self):
        self.exit_code = 0

class Reads:  # properties over a carried outcome are no copy
    @property
    def status(self):
        return self.outcome.status
    @property
    def exit_code(self):
        return self.outcome.exit_code
"""
    found = list(result_types(ast.parse(forms), "x.py"))
    assert found == ["x.py:Fields", "x.py:ClassAttributes", "x.py:SetInInit", "x.py:Mixed"]
