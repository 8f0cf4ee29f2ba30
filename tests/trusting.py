"""Approving a project's configuration in a test, as `caretz trust --yes` would, in the
data dir the test's caretz uses (CARETZ_DATA_DIR)."""

from __future__ import annotations

import os
from pathlib import Path

from caretz.runtime.project_trust import approve, read_project


def trust_project(workspace: Path, data_dir: Path | None = None) -> None:
    """Approve the project's configuration, whole, as it is now."""
    approve(data_dir or Path(os.environ["CARETZ_DATA_DIR"]), read_project(workspace))
