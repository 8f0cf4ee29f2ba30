"""What the permission rules cost: the parser's import, one check, and redaction.

Prints medians of:
  import                 python -c "import caretz.permissions.policy" (the parser not loaded)
  parser load            tree_sitter + tree_sitter_bash imported and the grammar loaded, in process
  check, 2 KB (dense)    RuleSet.check, 39 rules, on a 2 KB line of about 100 short commands
  check, 2 KB (typical)  the same on a 2 KB line of a few commands with long arguments
                         (goal for a 2 KB line: < 1 ms), each first read and read again
                         (parsed lines are cached: a retried command is read once)
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
from caretz.permissions.settings import (  # noqa: E402
    rules_from_disallowed_tools,
    rules_from_permissions,
)
from caretz.permissions.shell import parse_command_line  # noqa: E402
from caretz.secrets import redact  # noqa: E402
from tests.secret_cases import LOOKALIKES, SECRETS  # noqa: E402

PERMISSIONS = {
    "allow": [
        "Bash(npm run test)", "Bash(npm run lint)", "Bash(npm ci)", "Bash(git status)",
        "Bash(git diff:*)", "Bash(git log:*)", "Bash(cd:*)", "Bash(ls:*)", "Bash(cat:*)",
        "Bash(grep:*)", "Bash(echo:*)", "Bash(python3 -m pytest:*)", "Bash(make:*)",
        "Bash(jq:*)", "Bash(head:*)", "Bash(tail:*)", "Bash(wc:*)", "Bash(sort:*)",
        "Edit(src/**)", "Edit(tests/**)", "Read", "Glob", "Grep",
    ],
    "ask": ["Bash(git push:*)", "Bash(npm publish:*)", "Bash(docker:*)", "Edit(./package.json)"],
    "deny": [
        "Bash(rm -rf:*)", "Bash(curl:*)", "Bash(wget:*)", "Bash(sudo:*)", "Bash(git reset --hard)",
        "Read(./.env*)", "Edit(./.git/**)", "Read(~/.ssh/**)",
    ],
}  # fmt: skip
DISALLOWED = {"bash": ["git push --force", "curl * | sh"], "write": ["*.pem", "secrets/*"]}

_PIECES = [
    "cd web && npm ci && npm run lint",
    "git status && git diff --stat HEAD~3",
    'for f in $(ls src/*.ts); do echo "checking $f"; grep -n TODO "$f" | head -5; done',
    "(cd api && make build 2>&1 | tail -20)",
    "cat package.json | jq '.scripts' | sort | wc -l",
    "timeout 300 python3 -m pytest tests/unit -q -x --maxfail=1",
    "bash -c 'echo start && ls -la build/ && echo done'",
    "env CI=1 NODE_ENV=test npm run test",
    "git log --oneline -20 | grep -v Merge",
    "find src -name '*.orig' -exec ls -l {} +",
]


_SCRIPT = (
    "import json, pathlib\\n"
    "for path in sorted(pathlib.Path('data').glob('*.json')):\\n"
    "    rows = json.loads(path.read_text())\\n"
    "    print(path.name, len(rows), sum(r.get('total', 0) for r in rows))\\n"
)


def typical_line() -> str:
    """A few commands, most of the 2 KB in their arguments (a script, a message)."""
    script = (_SCRIPT * 12)[:1870]
    message = "Fix the parser for nested quotes; add tests for the empty-input case"
    line = (
        f'cd /work/project && python3 -c "{script}" | tee out.txt && '
        f"git add -A && git commit -m '{message}' && git log --oneline -3"
    )
    return line


def dense_line() -> str:
    pieces: list[str] = []
    while len(" && ".join(pieces)) < 2048:
        pieces.append(_PIECES[len(pieces) % len(_PIECES)])
    return " && ".join(pieces)[:2048].rsplit(" && ", 1)[0]


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
    rules = rules_from_permissions(PERMISSIONS, ".caretz/settings.json")
    rules += rules_from_disallowed_tools(DISALLOWED, "loopGuard.detectors.disallowedTools")
    ruleset = RuleSet(rules, root)
    lines = {"dense": dense_line(), "typical": typical_line()}
    for name, line in lines.items():
        decision = ruleset.check("bash", {"command": line}, root)
        print(f"{name} line: {len(line)} B, {decision.outcome}: {decision.reason[:70]}")

    def first_read(line: str) -> object:
        parse_command_line.cache_clear()
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
