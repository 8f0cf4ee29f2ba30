"""The judge evaluation's report: one JSON object, and the same data as text tables.

`build_report` gathers everything (`--output json` prints it as is);
`render_text` draws it as markdown tables, ready to paste into a doc.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from caretz.eval.judge_eval import JudgedCall, TrajectoryRun
from caretz.eval.judge_score import (
    ScoredCall,
    call_stats,
    outcomes,
    scored_calls,
    tallies,
)
from caretz.text import one_line


@dataclass(kw_only=True)
class ReportContext:
    """What the report says about the run besides the answers."""

    judge: dict[str, Any]  # model, base_url, reasoning, prompt_version, min_confidence
    within: int = 10
    given: int = 0  # labelled trajectories asked for (after --limit)
    unlabelled: list[str] = field(default_factory=list)
    interrupted: bool = False


def build_report(
    runs: Sequence[TrajectoryRun],
    context: ReportContext,
    cost: Callable[[JudgedCall], float | None],
) -> dict[str, Any]:
    scored = scored_calls(runs)
    overall, by_kind = tallies(scored)
    unsure = [s for s in scored if s.call.unsure and s.expected is not None]
    return {
        "judge": context.judge,
        "trajectories": {
            "given": context.given,
            "judged": len(runs),
            "scored": sum(not r.labelled.label.low_confidence for r in runs),
            "not_scored_low_confidence": [
                r.labelled.trajectory.id for r in runs if r.labelled.label.low_confidence
            ],
            "skipped_unlabelled": context.unlabelled,
            "interrupted": context.interrupted,
        },
        "verdicts": {
            "overall": overall.to_json(),
            "by_kind": {kind: tally.to_json() for kind, tally in by_kind.items()},
            "unsure_stuck": {
                "calls": len(unsure),
                "should_be_stuck": sum(bool(s.expected) for s in unsure),
            },
        },
        "outcome": outcomes(runs, context.within).to_json(),
        "per_call": call_stats([s.call for s in scored], cost).to_json(),
        "wrong": [_call_json(s) for s in scored if s.wrong],
        "runs": [_run_json(run, scored) for run in runs],
        "calls": [_call_json(s) for s in scored],
    }


def _call_json(scored: ScoredCall) -> dict[str, Any]:
    call = scored.call
    return {
        "trajectory": scored.trajectory,
        "kind": scored.kind,
        "step": call.step,
        "trigger": call.trigger,
        "headline": call.headline,
        "expected_stuck": scored.expected,
        "answered_stuck": scored.answered,
        "confidence": call.verdict.confidence,
        "unsure": call.unsure,
        "reason": call.verdict.reason,
        "try_instead": call.verdict.try_instead,
        "error": call.error,
        "latency_s": call.latency_s,
        "usage": call.usage.to_dict(),
        "cached": call.cached,
    }


def _run_json(run: TrajectoryRun, scored: Sequence[ScoredCall]) -> dict[str, Any]:
    trajectory, label = run.labelled.trajectory, run.labelled.label
    mine = [s for s in scored if s.trajectory == trajectory.id]
    return {
        "trajectory": trajectory.id,
        "kind": label.kind,
        "stuck": label.stuck,
        "first_stuck_step": label.first_stuck_step,
        "stuck_until": label.stuck_until,
        "scored": not label.low_confidence,
        "steps": len(trajectory.steps),
        "calls": len(mine),
        "stuck_answers": sum(s.answered for s in mine),
        "wrong": sum(s.wrong for s in mine),
        "redirect_step": run.redirect_step,
        "redirect_by": run.redirect_by or None,
        "stop_step": run.stop_step,
        "stop_by": run.stop_by or None,
    }


# ---------------------------------------------------------------- text


def render_text(report: Mapping[str, Any]) -> list[str]:
    lines = _heading(report)
    lines += ["", 'Verdicts: the judge\'s "stuck" answers against the labels', ""]
    lines += _verdict_table(report["verdicts"])
    lines += _verdict_notes(report)
    lines += ["", *_outcome_lines(report["outcome"])]
    lines += ["", _per_call_line(report["per_call"], report["judge"]["model"])]
    lines += ["", *_wrong_lines(report["wrong"])]
    lines += ["", *_runs_table(report["runs"])]
    return lines


def _heading(report: Mapping[str, Any]) -> list[str]:
    judge, counts = report["judge"], report["trajectories"]
    reasoning = judge.get("reasoning") or "off"
    where = f" at {judge['base_url']}" if judge.get("base_url") else ""
    lines = [
        f"Judge {judge['model']}{where} (reasoning {reasoning}, "
        f"minConfidence {judge['min_confidence']:g}, prompt {judge['prompt_version']}): "
        f"{counts['judged']} of {counts['given']} trajectories judged, {counts['scored']} scored."
    ]
    if counts["interrupted"]:
        lines.append(
            "Interrupted: the figures cover the trajectories finished before Ctrl-C; "
            "run the same command again to go on (answers so far are cached)."
        )
    return lines


def _verdict_table(verdicts: Mapping[str, Any]) -> list[str]:
    header = ["", "calls", "should be stuck", "TP", "FP", "FN", "TN", "precision", "recall", "F1"]
    rows = [_row(header), _row(["---"] * len(header))]
    for name, tally in [("**overall**", verdicts["overall"]), *verdicts["by_kind"].items()]:
        cells = [
            name,
            *(str(tally[k]) for k in ("calls", "should_be_stuck", "tp", "fp", "fn", "tn")),
        ]
        cells += [_share(tally[k]) for k in ("precision", "recall", "f1")]
        rows.append(_row(cells))
    return rows


def _verdict_notes(report: Mapping[str, Any]) -> list[str]:
    unsure, per_call = report["verdicts"]["unsure_stuck"], report["per_call"]
    minimum = report["judge"]["min_confidence"]
    lines = [
        "",
        f'"stuck" below minConfidence {minimum:g}: {unsure["calls"]} '
        f'({unsure["should_be_stuck"]} inside a stuck stretch); scored as "stuck" above, '
        "but the guard carries on after them.",
        f"No answer (timeout, error, unreadable reply): {per_call['errors']}, "
        'scored as "not stuck".',
    ]
    low = report["trajectories"]["not_scored_low_confidence"]
    if low:
        lines.append(f"Not scored (low-confidence label): {', '.join(low)}.")
    return lines


def _outcome_lines(outcome: Mapping[str, Any]) -> list[str]:
    n = outcome["within_steps"]
    header = [
        "active mode",
        "runs",
        f"redirected within {n} steps of onset",
        f"stopped within {n} steps of onset",
        "redirected in the loop",
        "stopped in the loop",
        "interrupted before onset",
        "steps to redirect (median)",
        "steps to stop (median)",
        "stuck calls after the stop",
    ]
    stuck = [
        "stuck runs",
        str(outcome["stuck_runs"]),
        *(
            str(outcome[k])
            for k in (
                "redirected_within",
                "stopped_within",
                "redirected_in_loop",
                "stopped_in_loop",
                "interrupted_before_onset",
            )
        ),
        _number(outcome["median_steps_to_redirect"]),
        _number(outcome["median_steps_to_stop"]),
        str(outcome["stuck_calls_after_stop"]),
    ]
    return [
        "End to end, with this judge in active mode (a stuck verdict redirects once, "
        "the next one ends the turn):",
        "",
        _row(header),
        _row(["---"] * len(header)),
        _row(stuck),
        "",
        f"Productive runs: {outcome['productive_interrupted']} of {outcome['productive_runs']} "
        f"interrupted ({outcome['productive_redirected']} redirected, "
        f"{outcome['productive_stopped']} stopped).",
    ]


def _per_call_line(stats: Mapping[str, Any], model: str) -> str:
    if not stats["calls"]:
        return "Per judge call: no calls."
    cost = (
        f"${stats['cost_mean_usd']:.4f} (total ${stats['cost_total_usd']:.4f})"
        if stats["cost_mean_usd"] is not None
        else f"unknown (no price for {model})"
    )
    return (
        f"Per judge call ({stats['calls']} calls, {stats['asked']} asked in this run, "
        f"{stats['calls'] - stats['asked']} from the cache): latency mean "
        f"{stats['latency_mean_s']:.2f}s, p95 {stats['latency_p95_s']:.2f}s; tokens mean "
        f"{stats['input_tokens_mean']:,.0f} in / {stats['output_tokens_mean']:,.0f} out; "
        f"cost mean {cost}."
    )


def _wrong_lines(wrong: Sequence[Mapping[str, Any]]) -> list[str]:
    if not wrong:
        return ["Wrong verdicts: none."]
    lines = [f"Wrong verdicts ({len(wrong)}):"]
    for call in wrong:
        answered = "stuck" if call["answered_stuck"] else "not stuck"
        expected = "stuck" if call["expected_stuck"] else "not stuck"
        why = f"no answer ({call['error']})" if call["error"] else call["reason"] or "(no reason)"
        text = (
            f"{call['trajectory']} @{call['step']} {call['headline']}: answered "
            f"{answered} ({call['confidence']:.2f}), expected {expected}: {why}"
        )
        lines.append("- " + one_line(text, 300))
    return lines


def _runs_table(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    header = ["trajectory", "label", "steps", "calls", "stuck answers", "wrong", "redirect", "stop"]
    rows = [_row(header), _row(["---"] * len(header))]
    for run in runs:
        rows.append(
            _row(
                [
                    run["trajectory"],
                    _label_text(run),
                    str(run["steps"]),
                    str(run["calls"]),
                    str(run["stuck_answers"]),
                    str(run["wrong"]),
                    _at(run["redirect_step"], run["redirect_by"]),
                    _at(run["stop_step"], run["stop_by"]),
                ]
            )
        )
    return rows


def _label_text(run: Mapping[str, Any]) -> str:
    text = run["kind"]
    if run["stuck"]:
        until = run["stuck_until"]
        text += f" {run['first_stuck_step']}–{until if until is not None else run['steps'] - 1}"
    return text if run["scored"] else f"{text} (low confidence, not scored)"


def _at(step: int | None, by: str | None) -> str:
    return "–" if step is None else f"@{step} {by or ''}".rstrip()


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _number(value: float | None) -> str:
    return "–" if value is None else f"{value:g}"


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"
