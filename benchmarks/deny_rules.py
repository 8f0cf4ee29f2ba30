"""What a deny rule costs in questions: how many everyday commands ask beside one.

A command whose text hands another to a program caretz does not read (a wrapper it does
not know, code given inline, a file the line writes for `make`) asks where a deny rule
could match it; one that only runs the project's files (`pytest`, `make test`) runs.
This prints, for the commands of tests/permissions/everyday.py and, with
--trajectories FILE..., for every shell command of real agent trajectories
(benchmarks/corpus/*.jsonl), how many each rule set lets run (allow or no rule), asks
about, and denies:

  no rules                       nothing configured
  deny git push                  `Bash(git push:*)` denied, nothing allowed
  deny git push + typical allows the same, with the allow rules a user of such a project
                                 writes for the runners they trust (everyday.TYPICAL_ALLOWS)
  deny rm, curl, wget            `Bash(rm:*)`, `Bash(curl:*)`, `Bash(wget:*)` denied

and the most common reasons for asking.

    .venv/bin/python benchmarks/deny_rules.py [--trajectories FILE ...]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from caretz.permissions.policy import RuleSet  # noqa: E402
from caretz.permissions.settings import rules_from_permissions  # noqa: E402
from tests.permissions.everyday import EVERYDAY, TYPICAL_ALLOWS  # noqa: E402

DENY = ["Bash(git push:*)"]
# The runners of the corpus's (mostly Python) projects, allowed by name.
TRAJECTORY_ALLOWS = [
    *TYPICAL_ALLOWS,
    "Bash(pylint:*)",
    "Bash(sphinx-build:*)",
    "Bash(./tests/runtests.py:*)",
    "Bash(dvc:*)",
]


def rule_sets(allows: list[str]) -> dict[str, dict[str, list[str]]]:
    return {
        "no rules": {},
        "deny git push": {"deny": DENY},
        "deny git push + typical allows": {"deny": DENY, "allow": allows},
        "deny rm, curl, wget": {"deny": ["Bash(rm:*)", "Bash(curl:*)", "Bash(wget:*)"]},
    }


def shell_commands(paths: list[str]) -> list[str]:
    found = []
    for path in paths:
        for line in Path(path).read_text().splitlines():
            for step in json.loads(line)["steps"]:
                command = step.get("args", {}).get("command")
                if step["tool"] == "bash" and isinstance(command, str):
                    found.append(command)
    return found


def report(name: str, commands: list[str], allows: list[str]) -> None:
    root = tempfile.mkdtemp()
    print(f"{name}: {len(commands)} commands")
    for label, permissions in rule_sets(allows).items():
        rules = RuleSet(rules_from_permissions(permissions, "benchmark"), root)
        outcomes: collections.Counter[str] = collections.Counter()
        reasons: collections.Counter[str] = collections.Counter()
        for command in commands:
            decision = rules.check("bash", {"command": command}, root)
            outcome = "runs" if decision.outcome in ("allow", "no-match") else decision.outcome
            outcomes[outcome] += 1
            if outcome == "ask":
                reasons[(decision.unresolved or decision.reason)[:60]] += 1
        asks = outcomes["ask"]
        print(
            f"  {label:32} runs {outcomes['runs']:5}  asks {asks:5} "
            f"({100 * asks / max(1, len(commands)):4.1f}%)  denied {outcomes['deny']:3}"
        )
        for reason, count in reasons.most_common(3):
            print(f"  {'':32}   {count:5} {reason}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trajectories", nargs="*", default=[])
    args = parser.parse_args()
    report("everyday commands (tests/permissions/everyday.py)", EVERYDAY, TYPICAL_ALLOWS)
    if args.trajectories:
        report("agent trajectories", shell_commands(args.trajectories), TRAJECTORY_ALLOWS)


if __name__ == "__main__":
    main()
