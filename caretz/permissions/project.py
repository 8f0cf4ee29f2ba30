"""A project's own settings file, `.caretz/settings.json`, and where the project starts.

Apart from the rules (permissions/settings.py) so a session can find its project and see
that it has no rules to read without loading the parts that read them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

PROJECT_SETTINGS = Path(".caretz") / "settings.json"


class RuleError(ValueError):
    """A rule caretz cannot read: the message names the rule, where it is, and what is wrong."""


def find_project_root(cwd: str | Path) -> Path:
    """The project a session works in: the git root above `cwd`, else `cwd` itself."""
    start = Path(os.path.abspath(cwd))
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


def read_project_settings(project_root: str | Path) -> dict[str, Any]:
    """The project's `.caretz/settings.json` as an object ({} when there is none); raises
    RuleError naming the file when it cannot be read or holds no JSON object."""
    path = Path(project_root) / PROJECT_SETTINGS
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as error:
        raise RuleError(f"{path}: cannot be read ({error.strerror})") from None
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as error:
        raise RuleError(f"{path}: not valid JSON ({error.msg}, line {error.lineno})") from None
    except RecursionError:
        raise RuleError(f"{path}: not valid JSON (nested too deep)") from None
    if not isinstance(data, dict):
        raise RuleError(f"{path}: must hold a JSON object")
    return data
