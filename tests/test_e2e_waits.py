"""The end-to-end tests wait on caretz only in bounded ways, so a hang fails the test
that waited, with a message saying what for (besides the limit every test has,
pyproject.toml's `timeout`):

- a child's output pipe is read line by line through `PipeLines` (tests/e2e/conftest.py),
  never by a loop over the pipe or a `readline()` that would wait for ever;
- an ACP scenario runs through `acp_editor.run`, within SCENARIO_S, never `asyncio.run`.
"""

from __future__ import annotations

import ast
from pathlib import Path

E2E = Path(__file__).resolve().parent / "e2e"
PIPES = {"stdout", "stderr"}
# A reader thread of its own whose waits each have a limit (its `wait_for`), for the
# llama.cpp server's progress lines.
OWN_READERS = {"test_local_models.py"}


def unbounded_waits(text: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.For | ast.AsyncFor):
            if isinstance(node.iter, ast.Attribute) and node.iter.attr in PIPES:
                found.append(f"{node.lineno}: for ... in .{node.iter.attr}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner, name = node.func.value, node.func.attr
            if name == "readline" and isinstance(owner, ast.Attribute) and owner.attr in PIPES:
                found.append(f"{node.lineno}: .{owner.attr}.readline()")
            if name == "run" and isinstance(owner, ast.Name) and owner.id == "asyncio":
                found.append(f"{node.lineno}: asyncio.run")
    return found


def test_the_end_to_end_tests_read_pipes_and_run_scenarios_only_in_bounded_ways():
    offenders = {
        path.name: found
        for path in sorted(E2E.glob("*.py"))
        if path.name not in OWN_READERS and (found := unbounded_waits(path.read_text()))
    }
    (in_run,) = offenders.pop("acp_editor.py")  # `acp_editor.run`'s own, bounded
    assert in_run.endswith(": asyncio.run")
    assert offenders == {}


def test_the_check_sees_each_unbounded_form():
    sample = (
        "for line in process.stdout:\n    pass\n"
        "first = caretz.stderr.readline()\n"
        "asyncio.run(scenario())\n"
        "for line in lines.until('the result'):\n    pass\n"
    )
    assert unbounded_waits(sample) == [
        "1: for ... in .stdout",
        "3: .stderr.readline()",
        "4: asyncio.run",
    ]
