"""A folder's files as the search tools see them, for people: `@path` completion and a
mentioned folder's listing in the interactive session.

It is glob's listing (caretz/tools/search.py): ripgrep's `--files`, so what .gitignore
and .ignore leave out and hidden (dot) files are not there, the sandbox's hidden paths
are rg excludes or dropped afterwards, and the user's Read deny rules skip files
(caretz/tools/search_scope.py). The root itself is checked like any read.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from caretz.tools.base import ToolContext
from caretz.tools.ripgrep import run_rg
from caretz.tools.search_results import file_rows
from caretz.tools.search_scope import rg_place, search_scope

LIST_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Listing:
    paths: list[str]  # sorted, relative to the workspace (as the tools show paths)
    complete: bool  # False: rg was stopped by the timeout, or `limit` cut the list


def list_files(
    ctx: ToolContext, folder: str | None = None, *, limit: int, timeout_s: float = LIST_TIMEOUT_S
) -> Listing:
    """The files below `folder` (default: the workspace), the first `limit` in path order.
    Raises PathRefused (the sandbox's check of the folder), ScopeError (not a folder, or
    its path kept changing) or RipgrepMissing."""
    scope = search_scope(ctx, folder, "glob", files_only=True)
    with rg_place(scope, ctx) as (cwd, target, fds, sandbox):
        ran = run_rg(
            ["--files", "--null", *scope.rg_args(), "--", target],
            cwd,
            timeout_s=timeout_s,
            cancel=threading.Event(),
            pass_fds=fds,
            sandbox=sandbox,
        )
    stdout = ran.stdout
    if ran.ended_by is not None and not stdout.endswith(b"\0"):
        stdout = stdout[: stdout.rfind(b"\0") + 1]  # a row cut off mid-path
    paths = sorted(scope.shown(row) for row in file_rows(stdout, scope))
    return Listing(paths[:limit], ran.ended_by is None and len(paths) <= limit)
