"""Source files as syntax trees, each parsed once per test process: the architecture tests
read every module of caretz/, most of them several times over."""

from __future__ import annotations

import ast
import functools
from pathlib import Path


def parsed(path: Path) -> ast.Module:
    """`path`'s syntax tree, shared by every reader: read it, never change it."""
    found = path.stat()
    return _parsed(path.resolve(), found.st_mtime_ns, found.st_size)


@functools.cache
def _parsed(path: Path, _mtime_ns: int, _size: int) -> ast.Module:  # a changed file: again
    return ast.parse(path.read_text(encoding="utf-8"), str(path))
