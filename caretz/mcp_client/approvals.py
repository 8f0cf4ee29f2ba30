"""Which servers of a project's `.mcp.json` the user approved, kept outside the project.

A `.mcp.json` comes with the repository: a server in it runs a command outside the
sandbox as soon as a session starts. So by default a project's server starts only once
the user approved it (`caretz mcp approve`), and an approval holds for the entry as it
was approved: change its command, arguments, env or URL and it asks again. The store is
caretz/approvals.py's, in caretz's data dir.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from caretz.approvals import ApprovalStore, digest
from caretz.mcp_client.config import McpServerEntry

APPROVALS_FILE = "mcp-approvals.json"


def entry_data(entry: McpServerEntry) -> dict[str, Any]:
    """What an approval holds for: the entry as written (before `${VAR}` expansion). An
    entry without `oauth` holds as it did before the key existed."""
    data = entry.model_dump(mode="json", by_alias=True, exclude={"disabled"})
    if data.get("oauth") is None:
        data.pop("oauth", None)
    return data


def entry_digest(entry: McpServerEntry) -> str:
    return digest(entry_data(entry))


class Approvals:
    """`<data dir>/mcp-approvals.json`: project root → server name → entry digest."""

    def __init__(self, data_dir: Path):
        self.store = ApprovalStore(data_dir, APPROVALS_FILE)
        self.path = self.store.path

    def approved(self, project: Path, name: str, entry: McpServerEntry) -> bool:
        return self.store.approved(project, name, entry_digest(entry))

    def approve(self, project: Path, entries: dict[str, McpServerEntry]) -> None:
        self.store.approve(project, {name: entry_digest(e) for name, e in entries.items()})

    def forget(self, project: Path) -> bool:
        return self.store.forget(project)
