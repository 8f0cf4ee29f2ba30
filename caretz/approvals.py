"""Approvals of what a project brings along that runs outside the sandbox, kept outside it.

A repository's `.mcp.json` servers and `.caretz/settings.json` hooks run commands with the
user's rights. caretz runs them only once the user approved them, and an approval holds
for what was approved, as a digest: change it and it asks again. Approvals live in
caretz's data dir, which commands in the sandbox cannot see, so neither the repository
nor the model can approve anything. A leaf: it knows only JSON and files.
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
        return self._read().get(str(project), {}).get(name) == approved_digest

    def approve(self, project: Path, digests: Mapping[str, str]) -> None:
        """Written as a new file renamed over the store: a symlink planted in the store's
        place is replaced, never followed."""
        data = self._read()
        data.setdefault(str(project), {}).update(digests)
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
