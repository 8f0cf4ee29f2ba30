"""`caretz batch`'s options. Every caretz command loads this module (the CLI mounts the
command), so the batch's work is declared lazy below: `caretz --help` loads none of it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from caretz.lazy import lazy_module

if TYPE_CHECKING:
    from caretz.batch import command as batch_command
else:
    # The batch itself (worktrees, settings, Rich's live view): loaded when a batch runs.
    batch_command = lazy_module("caretz.batch.command")


def batch(
    ctx: typer.Context,
    tasks: Annotated[
        Path,
        typer.Argument(help='JSON lines: {"id", "prompt"}, and "cwd", "model", "profile".'),
    ],
    workers: Annotated[
        int | None,
        typer.Option(help="Tasks run at once [default: half the cores, 1 to 8].", min=1),
    ] = None,
    results: Annotated[
        Path | None,
        typer.Option(
            help="A JSON line per task, appended as each ends; a rerun skips the tasks "
            "there [default: TASKS.results.jsonl beside TASKS]."
        ),
    ] = None,
) -> None:
    """Run many tasks, each headless in a git worktree of its own, N at a time
    (docs/batch.md). The root options apply to every task: caretz --loop-guard-model M
    batch tasks.jsonl."""
    root = ctx.parent.params if ctx.parent is not None else {}
    code = batch_command.run_batch(ctx.obj or {}, tasks, workers, results, root.get("env_file"))
    raise typer.Exit(code)
