"""Loop-guard benchmark: caretz's guard and the peers' rules on the labelled corpus.

    .venv/bin/python benchmarks/corpus_eval.py [CORPUS.jsonl ...] [--out DIR]
        [--update-doc docs/benchmarks.md]

CORPUS defaults to both files of benchmarks/corpus/
(trajectories.jsonl, trajectories-2.jsonl) and the held-out runs written for
this benchmark (benchmarks/heldout.py), each scored on its own. Prints one line
per set (recall within 10 steps, the stagnation signal's share, judge calls per
100 productive calls), then markdown tables per set (the summary, then
per-trajectory details), then the scripted scenarios
(benchmarks/guard_scenarios.py), and, when matplotlib is installed (the `bench`
extra), writes a plot of detection step against labelled step into
benchmarks/out/.

Every method replays the same recorded steps. caretz's guard runs in shadow
mode with no judge: each place it would ask its judge is counted as a trigger
(and as one judge call); whether the judge would then say "stuck" is not
measured here. Baselines are scored on what they do: a hard stop (or block)
ends or refuses, a warning only tells the model.
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CORPUS_DIR = REPO / "benchmarks" / "corpus"  # the labelled trajectories (its README, LICENSES.md)
DEFAULT_CORPUS = CORPUS_DIR / "trajectories.jsonl"
DEFAULT_CORPORA = [DEFAULT_CORPUS, CORPUS_DIR / "trajectories-2.jsonl"]
DEFAULT_OUT = REPO / "benchmarks" / "out"
CHARS_PER_TOKEN = 4  # the corpus has no token counts: tokens ≈ characters / 4
WITHIN = 10  # a loop counts as caught in time when first asked about within this many steps
HELDOUT = "held-out runs (benchmarks/heldout.py)"
FLAT_RULE = "check-every (flat)"  # a periodic check the stagnation signal brought forward


# ---------------------------------------------------------------- data


@dataclass(frozen=True)
class Mark:
    """One firing of one method on one trajectory."""

    step: int
    action: str  # "judge" (caretz asks its judge), "warn", "block" (that call) or "stop" (the run)
    rule: str

    @property
    def hard(self) -> bool:
        return self.action in ("block", "stop")

    @property
    def ends_run(self) -> bool:
        return self.action == "stop"


@dataclass
class MethodRun:
    name: str
    note: str
    marks: dict[str, list[Mark]]  # by trajectory id
    judge_calls: dict[str, int] | None = None  # caretz's guard only
    # "any": the first firing of any kind counts as the detection (the guard asks
    # its judge there); "hard": only a stop/block counts (what a rule acts on).
    detect_on: str = "hard"


@dataclass(frozen=True)
class Stretch:
    first: int  # labelled first_stuck_step
    end: int  # stuck_until, or the last step when the agent never recovered


@dataclass
class StuckScore:
    span: Stretch
    detection: Mark | None  # first counted firing inside the stuck stretch
    early: Mark | None  # first firing of any kind before the label
    ended_before_label: Mark | None  # a stop before the loop started: the run ends there
    saved_calls: int
    saved_chars: int


@dataclass
class Row:
    method: MethodRun
    stuck: dict[str, StuckScore] = field(default_factory=dict)


# ---------------------------------------------------------------- methods


class UnreachableJudge:
    """A judge that never answers: the guard's deterministic checks act alone."""

    model = "unreachable"

    def __call__(self, summary: str, timeout_s: float) -> Any:
        from caretz.guard.model import JudgeResult

        return JudgeResult.no_verdict(self.model, 0.0, "unreachable")


def guard_run(
    trajectories: Sequence[Any], name: str, note: str, judge: Any = None, **overrides: Any
) -> MethodRun:
    from caretz.eval.replay import replay
    from caretz.guard.config import LoopGuardConfig

    config = LoopGuardConfig(**overrides)
    marks: dict[str, list[Mark]] = {}
    judge_calls: dict[str, int] = {}
    for trajectory in trajectories:
        result = replay(trajectory, config, judge)
        marks[trajectory.id] = [Mark(f.step, f.severity, _rule(f)) for f in result.firings]
        judge_calls[trajectory.id] = result.judge_calls
    return MethodRun(name, note, marks, judge_calls, detect_on="any")


def _rule(firing: Any) -> str:
    """The check that fired, with the periodic check told apart when the stagnation
    signal brought it forward."""
    from caretz.guard.triggers import FLAT

    flat = firing.trigger == "check-every" and firing.fingerprint.endswith(FLAT)
    return FLAT_RULE if flat else firing.trigger


def hard_only(run: MethodRun, name: str, note: str) -> MethodRun:
    marks = {tid: [m for m in ms if m.hard] for tid, ms in run.marks.items()}
    return MethodRun(name, note, marks, None, detect_on="hard")


def baseline_runs(trajectories: Sequence[Any]) -> list[MethodRun]:
    from caretz.eval.baselines import BASELINES

    runs = []
    for baseline in BASELINES.values():
        marks = {
            t.id: [Mark(f.step, f.action, f.rule) for f in baseline.run(t.steps)]
            for t in trajectories
        }
        runs.append(MethodRun(baseline.name, baseline.source, marks))
    return runs


# ---------------------------------------------------------------- scoring


def stretch(trajectory: Any) -> Stretch | None:
    label = trajectory.label or {}
    if not label.get("stuck"):
        return None
    end = label.get("stuck_until")
    return Stretch(
        int(label["first_stuck_step"]), len(trajectory.steps) - 1 if end is None else end
    )


def counted(run: MethodRun, marks: Sequence[Mark]) -> list[Mark]:
    return list(marks) if run.detect_on == "any" else [m for m in marks if m.hard]


def score_stuck(run: MethodRun, trajectory: Any, span: Stretch) -> StuckScore:
    marks = sorted(run.marks[trajectory.id], key=lambda m: m.step)
    early = next((m for m in marks if m.step < span.first), None)
    ended = next((m for m in marks if m.ends_run and m.step < span.first), None)
    in_stretch = [m for m in counted(run, marks) if span.first <= m.step <= span.end]
    detection = None if ended else next(iter(in_stretch), None)
    # Only a stop inside the loop counts as a saving: a stop before it also cut
    # the productive work that came first (that is counted as "stopped before label").
    stop = None if ended else _stop_in_stretch(run, in_stretch)
    saved = range(max(stop.step + 1, span.first), span.end + 1) if stop else range(0)
    chars = sum(len(trajectory.steps[i].output) for i in saved)
    return StuckScore(span, detection, early, ended, len(saved), chars)


def _stop_in_stretch(run: MethodRun, in_stretch: list[Mark]) -> Mark | None:
    """Where the run would have ended. For caretz's guard this assumes the judge
    says "stuck" at its first trigger in the loop and the turn stops there (an
    upper bound: in active mode the first stuck verdict redirects, the next stops)."""
    if run.detect_on == "any":
        return next(iter(in_stretch), None)
    return next((m for m in in_stretch if m.ends_run), None)


def is_low_confidence(trajectory: Any) -> bool:
    return (trajectory.label or {}).get("confidence") == "low"


# ---------------------------------------------------------------- tables


def summary_table(rows: list[Row], trajectories: Sequence[Any]) -> str:
    stuck = [t for t in trajectories if stretch(t)]
    productive = [t for t in trajectories if not stretch(t) and not is_low_confidence(t)]
    low = [t for t in trajectories if not stretch(t) and is_low_confidence(t)]
    header = [
        "method",
        f"stuck: caught in stuck stretch (of {len(stuck)})",
        "steps after label (median; sum)",
        "stuck: first firing before label",
        "stuck: stopped before label",
        f"stuck calls saved by a stop in the loop (of {_stuck_calls(stuck)}; obs. tokens ≈)",
        f"productive (of {len(productive)}): any firing",
        "productive: stopped/blocked",
        "judge calls / 100 tool calls (productive)",
        *[f"{t.id} (low-conf., productive)" for t in low],
    ]
    lines = [_row(header), _row(["---"] * len(header))]
    for row in rows:
        lines.append(_row(_summary_cells(row, productive, low)))
    return "\n".join(lines)


def _stuck_calls(stuck: Sequence[Any]) -> int:
    return sum(span.end - span.first + 1 for span in (stretch(t) for t in stuck) if span)


def totals_line(rows: list[Row], trajectories: Sequence[Any]) -> str:
    """The corpus's size and the guard's judge calls over all of it."""
    steps = sum(len(t.steps) for t in trajectories)
    stuck = [t for t in trajectories if stretch(t)]
    parts = [
        f"{len(trajectories)} trajectories, {steps} tool calls; "
        f"{_stuck_calls(stuck)} calls inside labelled stuck stretches"
    ]
    for row in rows:
        if row.method.judge_calls is not None:
            calls = sum(row.method.judge_calls.values())
            parts.append(
                f"{row.method.name}: {calls} judge calls in all ({100 * calls / steps:.1f} per 100)"
            )
    return "; ".join(parts) + "."


def _summary_cells(row: Row, productive: Sequence[Any], low: Sequence[Any]) -> list[str]:
    run = row.method
    scores = list(row.stuck.values())
    delays = [s.detection.step - s.span.first for s in scores if s.detection]
    median = f"{statistics.median(delays):g}; {sum(delays)}" if delays else "–"
    saved_calls = sum(s.saved_calls for s in scores)
    saved_tokens = sum(s.saved_chars for s in scores) // CHARS_PER_TOKEN
    fired = [t for t in productive if run.marks[t.id]]
    stopped = [t for t in productive if any(m.hard for m in run.marks[t.id])]
    return [
        f"**{run.name}**",
        str(sum(1 for s in scores if s.detection)),
        median,
        str(sum(1 for s in scores if s.early)),
        str(sum(1 for s in scores if s.ended_before_label)),
        f"{saved_calls} ({_thousands(saved_tokens)})",
        str(len(fired)),
        str(len(stopped)),
        _judge_rate(run, productive),
        *[_first_marks(run, t) for t in low],
    ]


def _judge_rate(run: MethodRun, productive: Sequence[Any]) -> str:
    if run.judge_calls is None:
        return "–"
    calls = sum(run.judge_calls[t.id] for t in productive)
    steps = sum(len(t.steps) for t in productive)
    return f"{100 * calls / steps:.1f}" if steps else "–"


def _first_marks(run: MethodRun, trajectory: Any) -> str:
    marks = run.marks[trajectory.id]
    if not marks:
        return "quiet"
    first = min(m.step for m in marks)
    hard = min((m.step for m in marks if m.hard), default=None)
    return f"fires @{first}" + (f", stops @{hard}" if hard is not None else "")


def stuck_detail(rows: list[Row], trajectories: Sequence[Any]) -> str:
    header = [
        "trajectory",
        "kind (confidence)",
        "steps",
        "stuck stretch",
        *[r.method.name for r in rows],
    ]
    lines = [_row(header), _row(["---"] * len(header))]
    for trajectory in trajectories:
        span = stretch(trajectory)
        if span is None:
            continue
        label = trajectory.label
        cells = [
            trajectory.id,
            f"{label['kind']} ({label['confidence']})",
            str(len(trajectory.steps)),
            f"{span.first}–{span.end}",
        ]
        cells += [_stuck_cell(row.stuck[trajectory.id]) for row in rows]
        lines.append(_row(cells))
    return "\n".join(lines)


def _stuck_cell(score: StuckScore) -> str:
    span = score.span
    parts = []
    if score.ended_before_label:
        ended = score.ended_before_label
        return f"**stopped before the loop** @{ended.step} {ended.rule}"
    if score.detection:
        parts.append(
            f"@{score.detection.step} (+{score.detection.step - span.first}) {score.detection.rule}"
        )
    else:
        parts.append("**missed**")
    if score.early:
        parts.append(f"early @{score.early.step} {score.early.rule}")
    return "; ".join(parts)


def productive_detail(rows: list[Row], trajectories: Sequence[Any]) -> str:
    header = ["trajectory", "steps", *[r.method.name for r in rows]]
    lines = [_row(header), _row(["---"] * len(header))]
    for trajectory in trajectories:
        if stretch(trajectory):
            continue
        name = trajectory.id + (" (low conf.)" if is_low_confidence(trajectory) else "")
        cells = [name, str(len(trajectory.steps))]
        cells += [_productive_cell(row.method, trajectory) for row in rows]
        lines.append(_row(cells))
    return "\n".join(lines)


def _productive_cell(run: MethodRun, trajectory: Any) -> str:
    marks = sorted(run.marks[trajectory.id], key=lambda m: m.step)
    if not marks:
        return "quiet"
    hard = next((m for m in marks if m.hard), None)
    rules = sorted({m.rule for m in marks})
    text = f"{len(marks)}× from @{marks[0].step} ({', '.join(rules)})"
    if run.judge_calls is not None:
        calls = run.judge_calls[trajectory.id]
        text += f", {calls} judge call{'' if calls == 1 else 's'}"
    if hard:
        text += f"; **stops @{hard.step} {hard.rule}**"
    return text


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def _thousands(number: int) -> str:
    return f"{number / 1000:.1f}k" if number >= 1000 else str(number)


# ---------------------------------------------------------------- plot


def write_plot(rows: list[Row], trajectories: Sequence[Any], out: Path) -> str:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "plot skipped: matplotlib is not installed (pip install -e '.[bench]')"
    stuck = [t for t in trajectories if stretch(t)]
    figure, axes = plt.subplots(figsize=(8, 7))
    limit = max(len(t.steps) for t in stuck)
    axes.plot([0, limit], [0, limit], color="grey", linewidth=1, label="detected at the label")
    markers = "osD^v<>px*"
    for number, row in enumerate(rows):
        points = [
            (stretch(t).first, row.stuck[t.id].detection.step)
            for t in stuck
            if row.stuck[t.id].detection
        ]
        if points:
            xs, ys = zip(*points, strict=True)
            label = f"{row.method.name} ({len(points)}/{len(stuck)})"
            axes.scatter(xs, ys, marker=markers[number % len(markers)], alpha=0.7, label=label)
    axes.set_xlabel("labelled first stuck step")
    axes.set_ylabel("first counted firing inside the stuck stretch")
    axes.set_title(f"Detection vs label on {len(stuck)} stuck trajectories (misses not drawn)")
    axes.legend(fontsize="small")
    out.mkdir(parents=True, exist_ok=True)
    path = out / "detection_vs_label.png"
    figure.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(figure)
    return f"plot written: {path}"


# ---------------------------------------------------------------- main


def evaluate(trajectories: Sequence[Any]) -> list[Row]:
    guard = guard_run(trajectories, "caretz guard", "defaults; every trigger asks the judge")
    runs = [
        guard,
        hard_only(
            guard_run(trajectories, "no judge", "", judge=UnreachableJudge()),
            "caretz guard: stop/block only",
            "deterministic detectors acting alone (no judge answers)",
        ),
        guard_run(trajectories, "caretz guard, checkEvery 0", "no periodic check", check_every=0),
        guard_run(
            trajectories,
            "caretz guard, stagnation off",
            "the periodic check at checkEvery only",
            stagnation={"enabled": False},
        ),
        *baseline_runs(trajectories),
    ]
    rows = []
    for run in runs:
        row = Row(run)
        for trajectory in trajectories:
            span = stretch(trajectory)
            if span is not None:
                row.stuck[trajectory.id] = score_stuck(run, trajectory, span)
        rows.append(row)
    return rows


@dataclass(frozen=True)
class SetFigures:
    """One set's headline figures for caretz's guard with its defaults."""

    name: str
    stuck: int
    in_time: int  # first asked about within WITHIN steps of the labelled start
    caught: int  # anywhere in the stuck stretch
    median: float | None
    by_flat: int  # ... of the in-time catches, first asked about by a flat check
    need_flat: int  # in time only with the stagnation signal
    productive: int
    stopped: int
    judge_rate: float | None  # judge calls per 100 productive tool calls
    judge_rate_without_flat: float | None


def set_figures(name: str, rows: list[Row], trajectories: Sequence[Any]) -> SetFigures:
    guard = rows[0]
    without = next((r for r in rows if r.method.name.endswith("stagnation off")), guard)
    scores = list(guard.stuck.values())
    in_time = [s for s in scores if _in_time(s)]
    delays = [s.detection.step - s.span.first for s in scores if s.detection]
    productive = [t for t in trajectories if not stretch(t) and not is_low_confidence(t)]
    return SetFigures(
        name=name,
        stuck=len(scores),
        in_time=len(in_time),
        caught=sum(1 for s in scores if s.detection),
        median=statistics.median(delays) if delays else None,
        by_flat=sum(1 for s in in_time if s.detection and s.detection.rule == FLAT_RULE),
        need_flat=sum(
            1 for tid, s in guard.stuck.items() if _in_time(s) and not _in_time(without.stuck[tid])
        ),  # fmt: skip
        productive=len(productive),
        stopped=sum(1 for t in productive if any(m.hard for m in guard.method.marks[t.id])),
        judge_rate=_rate(guard.method, productive),
        judge_rate_without_flat=_rate(without.method, productive),
    )


def _in_time(score: StuckScore) -> bool:
    return score.detection is not None and score.detection.step - score.span.first <= WITHIN


def _rate(run: MethodRun, productive: Sequence[Any]) -> float | None:
    steps = sum(len(t.steps) for t in productive)
    if run.judge_calls is None or not steps:
        return None
    return 100 * sum(run.judge_calls[t.id] for t in productive) / steps


def overview_table(figures: Sequence[SetFigures]) -> str:
    header = [
        "set",
        f"stuck caught within {WITHIN} steps (recall)",
        "steps after label (median)",
        "first asked by a flat check / caught in time only with it",
        "productive stopped",
        "judge calls / 100 productive calls (stagnation off)",
    ]
    lines = [_row(header), _row(["---"] * len(header))]
    for f in figures:
        recall = f"{f.in_time} of {f.stuck} ({100 * f.in_time / f.stuck:.0f}%)" if f.stuck else "–"
        rate = "–" if f.judge_rate is None else f"{f.judge_rate:.1f}"
        if f.judge_rate_without_flat is not None:
            rate += f" ({f.judge_rate_without_flat:.1f})"
        lines.append(
            _row(
                [
                    f.name,
                    recall,
                    "–" if f.median is None else f"{f.median:g}",
                    f"{f.by_flat} / {f.need_flat}",
                    f"{f.stopped} of {f.productive}",
                    rate,
                ]
            )
        )
    return "\n".join(lines)


DOC_START = "<!-- corpus-eval:start -->"
DOC_END = "<!-- corpus-eval:end -->"


def report(rows: list[Row], trajectories: Sequence[Any], corpus: str) -> str:
    today = datetime.date.today().isoformat()
    return "\n".join(
        [
            f"### `{corpus}`",
            "",
            f"Generated {today} by `.venv/bin/python benchmarks/corpus_eval.py` "
            f"on `{corpus}` ({len(trajectories)} trajectories).",
            "",
            summary_table(rows, trajectories),
            "",
            totals_line(rows, trajectories),
            "",
            f"#### `{corpus}`: stuck trajectories, first counted firing in the stuck stretch",
            "",
            "`@N (+D) rule`: first counted firing at step N, D steps after the labelled start; "
            "`early @N`: a firing before the label; **missed**: nothing counted inside the stretch.",
            "",
            stuck_detail(rows, trajectories),
            "",
            f"#### `{corpus}`: productive trajectories, firings, and the first stop/block",
            "",
            productive_detail(rows, trajectories),
        ]
    )


def scenarios_report() -> str:
    from benchmarks.guard_scenarios import scenario_table

    return "\n".join(
        [
            "### Scripted scenarios (`benchmarks/guard_scenarios.py`)",
            "",
            "Calls (1-based) until the guard first asks its judge, and where an active guard "
            "sends its note and ends the turn with a judge that always says stuck, one that "
            "always says not stuck, and one that never answers.",
            "",
            scenario_table(),
        ]
    )


def update_doc(path: Path, text: str) -> None:
    """Replace what lies between the corpus-eval markers in a markdown file."""
    doc = path.read_text(encoding="utf-8")
    start, end = doc.find(DOC_START), doc.find(DOC_END)
    if start < 0 or end < start:
        raise ValueError(f"{path}: add the lines {DOC_START} and {DOC_END} where the tables go")
    path.write_text(
        doc[: start + len(DOC_START)] + "\n" + text + "\n" + doc[end:], encoding="utf-8"
    )


def main(argv: Sequence[str] | None = None, echo: Callable[[str], None] = print) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "corpus",
        nargs="*",
        type=Path,
        help="corpus files (default: both files of benchmarks/corpus/)",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where the plot goes")
    parser.add_argument(
        "--update-doc",
        type=Path,
        metavar="MARKDOWN",
        help="also write the tables between the corpus-eval markers of this file",
    )
    args = parser.parse_args(argv)
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from caretz.eval.replay import TrajectoryError, load_trajectories

    try:
        sets = _sets(args.corpus, load_trajectories)
    except TrajectoryError as exc:
        echo(f"error: {exc}")
        return 2
    texts, figures = [], []
    for name, trajectories in sets:
        rows = evaluate(trajectories)
        figures.append(set_figures(name, rows, trajectories))
        texts.append(report(rows, trajectories, name))
        echo(texts[-1])
        out = args.out / Path(name).stem.split(" ")[0]
        echo("\n" + write_plot(rows, trajectories, out) + "\n")
    overview = "\n".join(["### Every set at a glance", "", overview_table(figures)])
    echo(overview)
    texts.insert(0, overview)
    texts.append(scenarios_report())
    echo(texts[-1])
    text = "\n\n".join(texts)
    if args.update_doc:
        try:
            update_doc(args.update_doc, text)
        except (OSError, ValueError) as exc:
            echo(f"error: {exc}")
            return 2
        echo(f"tables written into {args.update_doc}")
    return 0


def _sets(corpora: list[Path], load: Callable[[Path], list[Any]]) -> list[tuple[str, list[Any]]]:
    """The sets to score: the files named, else both corpus files and the held-out runs."""
    if corpora:
        return [(corpus.name, load(corpus)) for corpus in corpora]
    from benchmarks.heldout import heldout_trajectories

    return [(c.name, load(c)) for c in DEFAULT_CORPORA] + [(HELDOUT, heldout_trajectories())]


if __name__ == "__main__":
    raise SystemExit(main())
