"""`.ci/run`, the README's test command: what it installs on a fresh machine."""

from __future__ import annotations

import re
from pathlib import Path

CI_RUN = Path(__file__).resolve().parents[1] / ".ci" / "run"


def test_the_system_packages_come_without_their_recommends():
    """cron recommends a mail server (exim), which nothing uses and which starts a daemon."""
    installs = [
        line for line in CI_RUN.read_text().splitlines() if re.search(r"apt-get\s+install", line)
    ]
    assert installs, "no apt-get install in .ci/run"
    assert all("--no-install-recommends" in line for line in installs), installs
