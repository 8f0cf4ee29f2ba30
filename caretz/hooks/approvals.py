"""Whether the user approved a project's hooks, kept outside the project.

A project's `.caretz/settings.json` comes with the repository, and its hooks run commands
outside the sandbox with the user's rights (SessionStart ones as soon as a session
starts). So they run only once the user approved them (`caretz hooks approve`), and an
approval holds for the `hooks` section as it was approved: change anything in it and it
waits again. The store is caretz/approvals.py's, in caretz's data dir; the profile's
hooks are the user's own and need none.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from caretz.approvals import ApprovalStore, digest

APPROVALS_FILE = "hook-approvals.json"
SECTION = "hooks"  # one approval a project: its whole `hooks` section


class HookApprovals:
    """`<data dir>/hook-approvals.json`: project root → digest of its `hooks` section."""

    def __init__(self, data_dir: Path):
        self.store = ApprovalStore(data_dir, APPROVALS_FILE)

    def approved(self, project: Path, section: Any) -> bool:
        """Whether `section` (the `hooks` value as read from the file) is the one approved."""
        return self.store.approved(project, SECTION, digest(section))

    def approve(self, project: Path, section: Any) -> None:
        self.store.approve(project, {SECTION: digest(section)})

    def forget(self, project: Path) -> bool:
        return self.store.forget(project)
