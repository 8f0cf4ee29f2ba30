"""docs/architecture.md opens with `caretz -p`'s route: every caretz frame on the stack when
the first request's bytes reach the socket, in order. This holds the doc to the code: each
step's module and function exist, and a real `-p` run (the real CLI in a subprocess, the
loopback model server) shows exactly those frames, as many as the doc says."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

from tests.e2e.conftest import WAIT_S, Caretz
from tests.modelserver import text
from tests.source_trees import parsed

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"

# A step: "N. `caretz/module.py` → `function`" (a method as `Class.method`).
STEP = re.compile(r"^(\d+)\. `(caretz/[\w/]+\.py)` → `([\w.<>]+)`", re.MULTILINE)
COUNT = re.compile(r"(\d+)\s+caretz\s+frames\s+from\s+the\s+command\s+line\s+to\s+the\s+socket")

# Runs caretz as `python -m caretz` does, recording the stack at the first write of a
# model request to a socket in the main thread (a frame in caretz/providers/ on it; the
# probes' requests for a server's window run in threads of their own).
RECORDER = r"""
import json, os, runpy, socket, sys, threading, traceback

out = os.environ["ROUTE_STACK_FILE"]

def recording(name):
    original = getattr(socket.socket, name)

    def write(self, *args, **kwargs):
        if threading.current_thread() is threading.main_thread() and not os.path.exists(out):
            frames = [(f.filename, f.name) for f in traceback.extract_stack()[:-1]]
            if any(os.sep + os.path.join("caretz", "providers") in f for f, _ in frames):
                with open(out, "w") as file:
                    json.dump(frames, file)
        return original(self, *args, **kwargs)

    setattr(socket.socket, name, write)

for name in ("send", "sendall"):
    recording(name)
sys.argv[0] = "caretz"
runpy.run_module("caretz", run_name="__main__", alter_sys=True)
"""


def documented_route() -> tuple[list[tuple[str, str]], int]:
    text = DOC.read_text(encoding="utf-8")
    head = text[: text.index("\n## ", text.index("## The `-p` route") + 1)]
    steps = STEP.findall(head)
    assert [int(number) for number, _, _ in steps] == list(range(1, len(steps) + 1))
    count = COUNT.search(head)
    assert count is not None, "the route states its count of caretz frames"
    return [(module, function) for _, module, function in steps], int(count.group(1))


def defines(module: str, function: str) -> bool:
    """Whether `module` defines `function` (`Class.method`; `<module>`: the module's own
    code; `Class.method.<lambda>`: a lambda in that method)."""
    tree: ast.AST = parsed(ROOT / module)
    *owners, name = function.split(".")
    if name == "<module>":
        return not owners
    for owner in owners:
        found = [
            node
            for node in ast.iter_child_nodes(tree)
            if isinstance(node, ast.ClassDef | ast.FunctionDef) and node.name == owner
        ]
        if not found:
            return False
        tree = found[0]
    if name == "<lambda>":
        return any(isinstance(node, ast.Lambda) for node in ast.walk(tree))
    return any(
        isinstance(node, ast.FunctionDef) and node.name == name
        for node in ast.iter_child_nodes(tree)
    )


def test_the_route_opens_the_architecture_doc():
    text = DOC.read_text(encoding="utf-8")
    first_section = text.index("\n## ")
    assert text[first_section:].startswith("\n## The `-p` route")


def test_each_step_of_the_route_exists():
    steps, count = documented_route()
    assert len(steps) == count
    missing = [
        f"{module} → {function}" for module, function in steps if not defines(module, function)
    ]
    assert missing == []


def test_a_real_run_shows_the_documented_route(server, tmp_path):
    server.add(text("Hello."))
    workspace = tmp_path / "project"
    workspace.mkdir()
    stack_file = tmp_path / "stack.json"
    caretz = Caretz(server, workspace)
    env = caretz.environment({"ROUTE_STACK_FILE": str(stack_file)})
    done = subprocess.run(
        [sys.executable, "-c", RECORDER, "-p", "say hello"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )
    assert done.returncode == 0, done.stderr
    frames = json.loads(stack_file.read_text())
    package = ROOT / "caretz"
    shown = [
        (Path(filename).relative_to(ROOT).as_posix(), name)
        for filename, name in frames
        if Path(filename).is_relative_to(package)
    ]
    steps, count = documented_route()
    assert [(module, function.rsplit(".", 1)[-1]) for module, function in steps] == shown
    assert len(shown) == count
