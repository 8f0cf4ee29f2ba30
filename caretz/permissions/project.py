"""A project's own settings file, `.caretz/settings.json`, and where the project starts.

Apart from the rules (permissions/settings.py) so a session can find its project and see
that it has no rules to read without loading the parts that read them.

The file is read through the door (sandbox/door.py, `read_beneath`): no symlink anywhere
below the project's root, a regular file with one link, at most MAX_SETTINGS_BYTES. A file
the door refuses is a RuleError naming it and why, and the session does not start: read as
"no settings" it would drop the project's deny rules and hooks, which only narrow.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from caretz.sandbox.door import read_beneath

PROJECT_SETTINGS = Path(".caretz") / "settings.json"
MAX_SETTINGS_BYTES = 1 << 20


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
        text = read_beneath(Path(project_root), PROJECT_SETTINGS.as_posix(), MAX_SETTINGS_BYTES)
    except FileNotFoundError:
        return {}
    except OSError as error:  # the door's Refused among them
        raise RuleError(f"{path}: cannot be read ({error.strerror})") from None
    try:
        data = json.loads(text) if text.strip() else {}
    except UnicodeDecodeError as error:
        raise RuleError(f"{path}: not UTF-8 text ({error.reason})") from None
    except json.JSONDecodeError as error:
        raise RuleError(f"{path}: not valid JSON ({error.msg}, line {error.lineno})") from None
    except RecursionError:
        raise RuleError(f"{path}: not valid JSON (nested too deep)") from None
    if not isinstance(data, dict):
        raise RuleError(f"{path}: must hold a JSON object")
    return data
