"""Which modules a real `caretz -p` run imports, read from `python -X importtime`."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path


def modules_imported_by_a_run(
    cwd: Path, env: Mapping[str, str], *flags: str, prompt: str = "hello"
) -> set[str]:
    """Every module `caretz -p hello` imports (the model server must have a reply ready)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "caretz", "-p", prompt, *flags],
        cwd=cwd,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
