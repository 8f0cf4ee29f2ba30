"""What the permission rules cost: the parser's import, one check, and redaction.

Prints medians of:
  import                 python -c "import caretz.permissions.policy" (the parser not loaded)
  parser load            tree_sitter + tree_sitter_bash imported and the grammar loaded, in process
  check, 2 KB (dense)    RuleSet.check, 39 rules, on a 2 KB line of about 100 short commands
                         (ten commands written over and over)
  check, 2 KB (distinct) the same with numbered arguments: few commands repeat
  check, 2 KB (typical)  the same on a 2 KB line of a few commands with long arguments
                         (goal for a 2 KB line: < 1 ms), each first read (nothing read
                         before, not even its words) and read again (parsed lines are
                         cached: a retried command is read once)
  check, short line      RuleSet.check on `npm run test`
  check, file path       RuleSet.check for an edit of src/app/models.py
  redact, 16 KB          caretz.secrets.redact on a judge-summary-sized text

    .venv/bin/python benchmarks/rules.py [--runs 9] [--checks 2000]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from caretz.permissions.policy import RuleSet  # noqa: E402
from caretz.permissions.shell import forget_read  # noqa: E402
from caretz.secrets import redact  # noqa: E402
from tests.permissions.corpus import (  # noqa: E402
    benchmark_rules,
    dense_line,
    distinct_dense_line,
    typical_line,
)
from tests.secret_cases import LOOKALIKES, SECRETS  # noqa: E402


def median_ms(action: Callable[[], object], count: int) -> float:
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def subprocess_ms(code: str, runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--checks", type=int, default=2000)
    args = parser.parse_args()

    floor = subprocess_ms("pass", args.runs)
    imported = subprocess_ms("import caretz.permissions.policy", args.runs)
    loaded = subprocess_ms(
        "from caretz.permissions.shell import load_parser; load_parser()", args.runs
    )
    print(f"{'python -c pass':28} {floor:8.1f} ms")
    print(f"{'import policy (no parser)':28} {imported:8.1f} ms  (+{imported - floor:.1f})")
    print(
        f"{'import + parser load':28} {loaded:8.1f} ms  (+{loaded - imported:.1f} for the parser)"
    )

    root = tempfile.mkdtemp()
    ruleset = RuleSet(benchmark_rules(), root)
    lines = {"dense": dense_line(), "distinct": distinct_dense_line(), "typical": typical_line()}
    for name, line in lines.items():
        decision = ruleset.check("bash", {"command": line}, root)
        print(f"{name} line: {len(line)} B, {decision.outcome}: {decision.reason[:70]}")

    def first_read(line: str) -> object:
        forget_read()  # no line and no word read before: the strictest first read
        return ruleset.check("bash", {"command": line}, root)

    checks = {
        **{f"check, {n} ({len(ln)} B)": (lambda ln=ln: first_read(ln)) for n, ln in lines.items()},
        **{
            f"check again, {n}": (lambda ln=ln: ruleset.check("bash", {"command": ln}, root))
            for n, ln in lines.items()
        },
        "check, short line": lambda: first_read("npm run test"),
        "check, file path": lambda: ruleset.check("edit", {"path": "src/app/models.py"}, root),
    }
    for name, action in checks.items():
        print(f"{name:28} {median_ms(action, args.checks):8.3f} ms")

    text = "\n".join([*(case for case, _ in SECRETS), *LOOKALIKES]) * 3
    text = text[:16_000]
    print(f"{f'redact, {len(text)} chars':28} {median_ms(lambda: redact(text), 200):8.3f} ms")


if __name__ == "__main__":
    main()
