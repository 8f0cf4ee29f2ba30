"""The live processes of this machine, read from /proc, for tests that check what a run
left behind."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path


def live_command_lines() -> Iterator[tuple[int, bytes]]:
    """Each live process's pid and raw command line (NUL-separated); zombies left out."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            yield int(entry.name), cmdline
