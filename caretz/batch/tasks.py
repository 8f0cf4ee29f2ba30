"""The tasks file: one JSON object a line, `{"id", "prompt"}` and optionally `"cwd"` (a
folder in a git repository; default the current one), `"model"` and `"profile"`.

Read whole and checked before anything runs: a broken line, an unknown key, a missing
folder or a duplicate id is a `TaskFileError` naming the file and the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from caretz import inbound

KEYS = ("id", "prompt", "cwd", "model", "profile")
# An id names the worktree batch-<id> and its branch caretz/batch-<id>.
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,93}")
WORKTREE_PREFIX = "batch-"


class TaskFileError(Exception):
    """The tasks file cannot run as written; the message is one line naming the line."""


@dataclass(frozen=True, kw_only=True)
class Task:
    id: str
    prompt: str
    cwd: Path  # absolute
    model: str | None = None
    profile: str | None = None
    line: int = 0  # where it is in the tasks file

    @property
    def worktree_name(self) -> str:
        return WORKTREE_PREFIX + self.id


def read_tasks(path: Path, start: Path) -> list[Task]:
    """The tasks of `path`, in order; a relative `cwd` is taken from `start` (the folder
    caretz batch runs in). Raises TaskFileError."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TaskFileError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise TaskFileError(f"{path}: cannot be read ({error})") from None
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        task = _task(line, number, start, f"{path} line {number}")
        if task.id in seen:
            raise TaskFileError(
                f"{path} line {number}: id {task.id!r} is line {seen[task.id]}'s too; "
                "each task needs an id of its own"
            )
        seen[task.id] = number
        tasks.append(task)
    if not tasks:
        raise TaskFileError(
            f'{path} has no tasks: write one JSON object a line, {{"id", "prompt"}}'
        )
    return tasks


def _task(line: str, number: int, start: Path, where: str) -> Task:
    try:
        data = inbound.load_json(line, "the line")
    except ValueError as error:
        raise TaskFileError(f"{where}: not JSON ({error})") from None
    if not isinstance(data, dict):
        raise TaskFileError(f'{where}: a task is a JSON object, {{"id": …, "prompt": …}}')
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise TaskFileError(f"{where}: unknown key {unknown[0]!r} (a task has {', '.join(KEYS)})")
    task_id = _text(data, "id", where, required=True)
    if not _ID.fullmatch(task_id) or task_id.endswith((".lock", ".")) or ".." in task_id:
        raise TaskFileError(
            f"{where}: id {task_id!r}: use up to 94 letters, digits, '.', '_' and '-', starting "
            "with a letter or digit (it names the worktree batch-ID)"
        )
    prompt = _text(data, "prompt", where, required=True)
    cwd = _folder(_text(data, "cwd", where) or ".", start, where)
    model, profile = _text(data, "model", where), _text(data, "profile", where)
    return Task(
        id=task_id,
        prompt=prompt,
        cwd=cwd,
        model=model or None,
        profile=profile or None,
        line=number,
    )


def _text(data: dict[str, Any], key: str, where: str, *, required: bool = False) -> str:
    value = data.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise TaskFileError(f"{where}: {key!r} must be a non-empty string")
    return value


def _folder(text: str, start: Path, where: str) -> Path:
    folder = Path(text).expanduser()
    folder = (folder if folder.is_absolute() else start / folder).resolve()
    if not folder.is_dir():
        raise TaskFileError(f"{where}: cwd {text!r}: no such folder ({folder})")
    return folder
