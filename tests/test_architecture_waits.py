"""Two seams new code must not go around, checked on the source:

- a command's exit is waited for by `ShellProcess.wait_exit` (tools/process.py), which
  wakes when the command exits: a loop on a process's `poll()` may not wait by sleeping,
  by a timed event or queue wait, or by anything but `wait_exit`;
- checkpoints read the project's own git objects (the blobs a shadow borrows) only through
  `ShadowGit(borrow=True)`, in the two places that need a blob's bytes: the copy taken
  when a file changes (checkpoints/seed.py) and the restore's blob reader, which checks
  each blob against its name (checkpoints/restore.py).
"""

from __future__ import annotations

import ast
from pathlib import Path

import caretz

SOURCE = Path(caretz.__file__).resolve().parent
# Waits that do not wake at a command's exit.
TIMED_WAITS = {"sleep", "wait", "get", "join", "wait_for"}
BORROWING = {"checkpoints/git.py", "checkpoints/seed.py", "checkpoints/restore.py"}


def sources() -> dict[str, str]:
    return {
        path.relative_to(SOURCE).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(SOURCE.rglob("*.py"))
    }


def _calls(node: ast.AST) -> list[str]:
    return [
        call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
        for call in ast.walk(node)
        if isinstance(call, ast.Call)
    ]


def polling_loops(text: str) -> list[int]:
    """Lines of loops on a process's `poll()` that wait some other way than `wait_exit`."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.While) and "poll" in _calls(node.test):
            waits = {name for statement in node.body for name in _calls(statement)}
            if waits & TIMED_WAITS:
                found.append(node.lineno)
    return found


def test_no_loop_waits_for_a_command_by_polling_it():
    offenders = {path: lines for path, text in sources().items() if (lines := polling_loops(text))}
    assert offenders == {}, "wait with ShellProcess.wait_exit (tools/process.py)"


def test_the_polling_check_sees_a_poll_loop_that_sleeps():
    sample = (
        "import time\n"
        "while process.poll() is None:\n"
        "    time.sleep(0.05)\n"
        "while process.poll() is None:\n"
        "    cancel.wait(0.05)\n"
        "while process.poll() is None:\n"
        "    process.wait_exit(0.05)\n"
    )
    assert polling_loops(sample) == [2, 4]


def test_the_projects_git_objects_are_read_only_where_a_blobs_bytes_are_needed():
    for path, text in sources().items():
        if "GIT_ALTERNATE_OBJECT_DIRECTORIES" in text or "info/alternates" in text:
            assert path == "checkpoints/git.py", path
        if "borrow=True" in text:
            assert path in BORROWING, path
        if '"cat-file", "--batch"' in text or "'cat-file', '--batch'" in text:
            assert path == "checkpoints/restore.py", path  # the reader that checks each blob
