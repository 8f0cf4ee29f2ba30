"""Two places every run's report and every git run pass through (docs/architecture.md):

- what a run used is read from its `RunTotals` only by `agent/limits.py`'s `usage_report`
  (the judge's share in), so no report (the result object, ACP, the Python API, the REPL,
  the budget) can leave the loop guard's judge out again;
- git runs only as the program caretz/trusted.py found (a `[git, …]` argv with `git` a
  path), never as a literal "git" looked up on a PATH a command could plant into.
"""

from __future__ import annotations

import ast
from pathlib import Path

import caretz
from tests.source_trees import parsed

PACKAGE = Path(caretz.__file__).parent
# Where the totals are kept and the one reading of them is made.
TOTALS_OWNERS = ("agent/",)
USAGE_FIELDS = {"usage", "cost_usd", "judge_usage", "judge_cost_usd"}


def _totals_reads(tree: ast.AST) -> list[tuple[int, str]]:
    """`x.totals.usage`, `totals.cost_usd`…: a usage field read off something named totals."""
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr in USAGE_FIELDS):
            continue
        owner = node.value
        name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
        if name.endswith("totals"):
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_every_usage_report_reads_the_totals_through_usage_report():
    found = [
        f"{shown}:{line}: {what}"
        for path in PACKAGE.rglob("*.py")
        if not (shown := path.relative_to(PACKAGE).as_posix()).startswith(TOTALS_OWNERS)
        for line, what in _totals_reads(parsed(path))
    ]
    assert found == [], "read what a run used with caretz.agent.limits.usage_report"


def test_the_totals_check_sees_a_read_of_its_own():
    tree = ast.parse(
        "cost = session.agent.conversation.totals.cost_usd\n"
        "used = totals.usage\n"
        "report = usage_report(totals).usage\n"
        "calls = totals.tool_calls\n"
    )
    assert _totals_reads(tree) == [
        (1, "session.agent.conversation.totals.cost_usd"),
        (2, "totals.usage"),
    ]


def _git_by_name(tree: ast.AST) -> list[tuple[int, str]]:
    """An argv whose program is the word git (or a path to one), or `which("git")`."""
    found = []
    for node in ast.walk(tree):
        first = node.elts[0] if isinstance(node, ast.List | ast.Tuple) and node.elts else None
        if isinstance(first, ast.Constant) and _names_git(first.value):
            found.append((node.lineno, ast.unparse(node)[:60]))
        asks_which = isinstance(node, ast.Call) and ast.unparse(node.func).endswith("which")
        if asks_which and any(isinstance(a, ast.Constant) and a.value == "git" for a in node.args):
            found.append((node.lineno, ast.unparse(node)))
    return found


def _names_git(value: object) -> bool:
    return isinstance(value, str) and (value == "git" or value.endswith("/git"))


def test_git_runs_only_as_the_trusted_program():
    found = [
        f"{path.relative_to(PACKAGE)}:{line}: {what}"
        for path in PACKAGE.rglob("*.py")
        for line, what in _git_by_name(parsed(path))
    ]
    assert found == [], "run git as caretz.trusted.find_program found it"


def test_the_git_check_sees_a_git_of_its_own():
    tree = ast.parse(
        'subprocess.run(["git", "worktree", "add", path])\n'
        'subprocess.run(("/usr/bin/git", "status"))\n'
        'program = shutil.which("git")\n'
        "subprocess.run([git.program, 'status'])\n"
    )
    assert sorted(line for line, _ in _git_by_name(tree)) == [1, 2, 3]
