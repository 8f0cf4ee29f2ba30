"""Which servers of a project's `.mcp.json` the user approved, kept outside the project.

A `.mcp.json` comes with the repository: a server in it runs a command outside the
sandbox as soon as a session starts. So by default a project's server starts only once
the user approved it (`caretz mcp approve`), and an approval holds for the entry as it
was approved: change its command, arguments, env or URL and it asks again. Approvals
live in caretz's data dir, which commands in the sandbox cannot see, so neither the
repository nor the model can approve a server.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from caretz.mcp_client.config import McpServerEntry

APPROVALS_FILE = "mcp-approvals.json"


def entry_digest(entry: McpServerEntry) -> str:
    """What an approval holds for: the entry as written (before `${VAR}` expansion)."""
    data = entry.model_dump(mode="json", by_alias=True, exclude={"disabled"})
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class Approvals:
    """`<data dir>/mcp-approvals.json`: project root → server name → entry digest."""

    def __init__(self, data_dir: Path):
        self.path = data_dir / APPROVALS_FILE

    def approved(self, project: Path, name: str, entry: McpServerEntry) -> bool:
        return self._read().get(str(project), {}).get(name) == entry_digest(entry)

    def approve(self, project: Path, entries: dict[str, McpServerEntry]) -> None:
        data = self._read()
        servers = data.setdefault(str(project), {})
        servers.update({name: entry_digest(entry) for name, entry in entries.items()})
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
