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
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any


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
        data = self._read()
        data.setdefault(str(project), {}).update(digests)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".approvals-", dir=self.path.parent)
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=2, sort_keys=True)
            out.write("\n")
        os.replace(temporary, self.path)

    def _read(self) -> dict[str, dict[str, str]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}  # none yet, or unreadable: nothing is approved
        return data if isinstance(data, dict) else {}
