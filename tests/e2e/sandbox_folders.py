"""The folders and system parts the sandbox's end-to-end tests share: a scratch folder
under /var/tmp (outside /tmp, which each session's commands see as their own), the project
in it, and the programs the tests need for real."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

PACKAGES = {"bwrap": "bubblewrap", "git": "git"}


def require(*programs: str) -> None:
    """Fail (never skip) when a program the test runs for real is missing."""
    for program in programs:
        package = PACKAGES.get(program, program)
        assert shutil.which(program), f"{program} is missing: apt install {package}"


def scratch_folder(prefix: str) -> Iterator[Path]:
    """For a fixture to `yield from`: a fresh folder, removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir="/var/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def project_folder(scratch: Path, readme: bool = True) -> Path:
    folder = scratch / "project"
    folder.mkdir()
    if readme:
        (folder / "README.md").write_text("hello\n")
    return folder
