"""`caretz guard eval`: score a judge model on labelled trajectories, end to end.

The command line (eval/cli.py) resolves the settings, the judge and the files;
this runs the evaluation and prints it: labels applied, `--limit` taken, the
answers asked for (cached per answer), a progress line per trajectory on
stderr, then the report. Ctrl-C prints the report of what finished and exits 130.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from caretz.eval.judge_eval import Answers, JudgedCall, PartialRun, TrajectoryRun, judge_all
from caretz.eval.judge_report import ReportContext, build_report, render_text
from caretz.eval.labels import Labelled, Labelling
from caretz.eval.verdict_cache import CACHE_FILE, VerdictCache, prompt_version
from caretz.guard.config import LoopGuardConfig
from caretz.guard.model import Judge

INTERRUPTED = 130
Echo = Callable[[str], None]


@dataclass(kw_only=True)
class EvalPlan:
    """Everything one `guard eval` run needs, resolved."""

    labelling: Labelling  # the trajectories with their labels (apply_labels)
    config: LoopGuardConfig
    judge: Judge
    judge_settings: dict[str, Any]  # model ref, endpoint, reasoning...: the cache key's part
    cost: Callable[[JudgedCall], float | None]
    data_dir: Path
    base_url: str | None = None  # as given with --base-url, for the report
    use_cache: bool = True
    concurrency: int = 1
    limit: int | None = None  # the first N labelled trajectories
    within: int = 10
    output: str = "text"


def run_evaluation(evaluation: EvalPlan, echo: Echo, note: Echo) -> int:
    """Judge, score and print; 0, or 130 after Ctrl-C (with what finished)."""
    labelling = evaluation.labelling
    items = labelling.labelled[: evaluation.limit]
    _notes(labelling.unlabelled, labelling.unused, note)
    cache = VerdictCache(evaluation.data_dir / CACHE_FILE) if evaluation.use_cache else None
    answers = Answers(evaluation.judge, evaluation.judge_settings, cache)
    context = ReportContext(
        judge=_judge_json(evaluation), within=evaluation.within, given=len(items)
    )
    context.unlabelled = labelling.unlabelled
    try:
        runs = judge_all(
            items, evaluation.config, answers, evaluation.concurrency, _progress(items, note)
        )
    except PartialRun as partial:
        runs, context.interrupted = partial.runs, True
        note(f"interrupted: {len(runs)} of {len(items)} trajectories judged")
    report = build_report(runs, context, evaluation.cost)
    if evaluation.output == "json":
        echo(json.dumps(report))
    else:
        for line in render_text(report):
            echo(line)
    return INTERRUPTED if context.interrupted else 0


def _judge_json(evaluation: EvalPlan) -> dict[str, Any]:
    settings = evaluation.judge_settings
    return {
        "model": settings["model"],
        "base_url": evaluation.base_url,
        "reasoning": settings.get("reasoning"),
        "prompt_version": prompt_version(),
        "min_confidence": evaluation.config.judge.min_confidence,
        "timeout_s": evaluation.config.judge_timeout_s,
    }


def _notes(unlabelled: Sequence[str], unused: Sequence[str], note: Echo) -> None:
    if unlabelled:
        shown = ", ".join(unlabelled[:5]) + (" …" if len(unlabelled) > 5 else "")
        note(f"note: {len(unlabelled)} trajectories have no label and are skipped: {shown}")
    for key in unused:
        note(f"note: the label for {key!r} matches no trajectory")


def _progress(items: Sequence[Labelled], note: Echo) -> Callable[[TrajectoryRun], None]:
    done = [0]

    def report(run: TrajectoryRun) -> None:
        done[0] += 1
        asked = sum(not call.cached for call in run.calls)
        note(
            f"[{done[0]}/{len(items)}] {run.labelled.trajectory.id}: "
            f"{len(run.calls)} judge calls ({asked} asked, {len(run.calls) - asked} cached)"
        )

    return report
