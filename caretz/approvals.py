"""Approvals of what a project brings along that widens what caretz does, kept outside it.

A repository's configuration (its allow rules, hooks, `.mcp.json` servers, command files
that run shell lines) is used only once the user approved it (caretz/runtime/
project_trust.py), and an approval holds for what was approved, as a digest: change it
and it asks again. Approvals live in caretz's data dir, which commands in the sandbox
cannot see, so neither the repository nor the model can approve anything. A leaf: it
knows only JSON and files.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from caretz import private_data

MAX_STORE_CHARS = 16 << 20


def digest(data: Any) -> str:
    """A digest of JSON data, the same whatever the order of its keys or its spacing."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class ApprovalStore:
    """`<data dir>/<file name>`: project root → name → digest of what was approved."""

    def __init__(self, data_dir: Path, file_name: str):
        self.path = data_dir / file_name

    def approved(self, project: Path, name: str, approved_digest: str) -> bool:
        return self.recorded(project).get(name) == approved_digest

    def recorded(self, project: Path) -> dict[str, str]:
        """Every digest approved for `project`, by name ({} for none)."""
        found = self._read().get(str(project), {})
        return dict(found) if isinstance(found, dict) else {}

    def approve(self, project: Path, digests: Mapping[str, str]) -> None:
        """`digests` approved for `project`, beside those approved before."""
        data = self._read()
        data.setdefault(str(project), {}).update(digests)
        self._write(data)

    def replace(self, project: Path, digests: Mapping[str, str]) -> None:
        """`digests`, and nothing else, approved for `project`."""
        data = self._read()
        data[str(project)] = dict(digests)
        self._write(data)

    def forget(self, project: Path) -> bool:
        """Nothing approved for `project` any more; whether anything was."""
        data = self._read()
        if data.pop(str(project), None) is None:
            return False
        self._write(data)
        return True

    def _write(self, data: dict[str, dict[str, str]]) -> None:
        """Written as a new file renamed over the store: a symlink planted in the store's
        place is replaced, never followed."""
        private_data.write_file(self.path, json.dumps(data, indent=2, sort_keys=True) + "\n")

    def _read(self) -> dict[str, dict[str, str]]:
        try:
            # O_NOFOLLOW: a symlink in the store's place approves nothing.
            handle = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            with os.fdopen(handle, encoding="utf-8") as source:
                if not stat.S_ISREG(os.fstat(source.fileno()).st_mode):
                    return {}
                data = json.loads(source.read(MAX_STORE_CHARS))
        except (OSError, ValueError):
            return {}  # none yet, or unreadable: nothing is approved
        return data if isinstance(data, dict) else {}
