"""Command lines and rule sets the rule check is measured and pinned on.

benchmarks/rules.py times the check with BENCHMARK_RULES on `dense_line()` and
`typical_line()`; tests/permissions/test_recorded.py checks that every decision on the
corpus (these lines, every string in the permission tests, and joins of them) and every
parsed command stay what tests/data/permission_decisions.json recorded.

    .venv/bin/python -m tests.permissions.corpus   # record the file again (after a change
                                                   # that is meant to change decisions)
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import json
import random
from pathlib import Path
from typing import Any

from caretz.permissions.command import Command
from caretz.permissions.policy import Decision, RuleSet
from caretz.permissions.rules import Behavior, Rule, RuleError, parse_rule
from caretz.permissions.settings import rules_from_disallowed_tools, rules_from_permissions

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / "tests" / "data" / "permission_decisions.json"
RECORDED_ROOT = Path("/project")  # the project root the decisions were made in
DISALLOWED_SOURCE = "loopGuard.detectors.disallowedTools"
SETTINGS = ".caretz/settings.json"

BENCHMARK_PERMISSIONS = {
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
BENCHMARK_DISALLOWED = {
    "bash": ["git push --force", "curl * | sh"],
    "write": ["*.pem", "secrets/*"],
}

PIECES = [
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

_NUMBERED = [
    "cd web{n} && npm ci && npm run lint",
    "git status && git diff --stat HEAD~{n}",
    'for f in $(ls src{n}/*.ts); do echo "checking $f"; grep -n TODO{n} "$f" | head -{n}; done',
    "(cd api{n} && make build{n} 2>&1 | tail -{n})",
    "cat package{n}.json | jq '.scripts{n}' | sort -k{n} | wc -l",
    "timeout {n}00 python3 -m pytest tests/unit{n} -q -x --maxfail={n}",
    "bash -c 'echo start{n} && ls -la build{n}/ && echo done{n}'",
    "env CI={n} NODE_ENV=test npm run test",
    "git log --oneline -{n} | grep -v Merge{n}",
    "find src{n} -name '*.orig' -exec ls -l {{}} +",
]
_SCRIPT = (
    "import json, pathlib\\n"
    "for path in sorted(pathlib.Path('data').glob('*.json')):\\n"
    "    rows = json.loads(path.read_text())\\n"
    "    print(path.name, len(rows), sum(r.get('total', 0) for r in rows))\\n"
)
_TEST_FILES = [
    "tests/permissions/test_bypasses.py",
    "tests/permissions/test_legacy.py",
    "tests/permissions/test_proposals.py",
    "tests/permissions/test_rules.py",
    "tests/permissions/test_shell.py",
    "tests/tools/test_permission.py",
    "tests/e2e/test_permissions.py",
]
OUTCOME_LETTERS = {"deny": "D", "ask": "A", "allow": "Y", "no-match": "-"}
_SHELL_WORDS = [
    "rm", "-rf", "-r", "-f", "--force", "--rec", "git", "push", "-C", "repo", "curl", "sh",
    "bash", "-c", "sudo", "-u", "root", "timeout", "5", "env", "FOO=1", "PATH=/x", "find", ".",
    "-delete", "-exec", "{}", ";", "+", "xargs", "eval", "'rm -rf v'", '"$x"', "$x", "${IFS}",
    "$(rm a)", "`rm b`", "r''m", "\\rm", "/bin/rm", "v", "-", "--", "<<'EOF'\nrm -rf v\nEOF\n",
    "<<EOF\n$(rm x)\nEOF\n", ">", "out", "2>&1", "|", "&&", "||", "&", "(", ")", "{", "}",
    "if", "then", "fi", "for", "i", "in", "do", "done", "case", "esac", "*", "?", "r?", "{a,b}",
    "'", '"', "\\\n", "npm", "run", "test", "ls", "-la", "cd", "echo", "python3", "-m", "watch",
    "trap", "EXIT", "alias", "x='rm -rf'", "su", "flock", "/tmp/l", "nice", "-n", "$'\\x72m'",
    "docker", "wget", "reset", "--hard", "-fr", "-Rf", "\n", "#", "a=b", "export", "unset",
    "x=$(rm q)", "<(ls)", ">(wc)", "<<<", "'a b'", '"c d"', "é", "\udcff",
]  # fmt: skip
_JOINERS = [" && ", " || ", "; ", " | ", " & ", "\n"]
_WRAPS = ["{}", "$({})", "bash -c {!r}", "( {} )", "timeout 5 {}", "sudo {}", "echo `{}`"]


def benchmark_rules() -> list[Rule]:
    rules = rules_from_permissions(BENCHMARK_PERMISSIONS, SETTINGS)
    return rules + rules_from_disallowed_tools(BENCHMARK_DISALLOWED, DISALLOWED_SOURCE)


def typical_line() -> str:
    """A few commands, most of the 2 KB in their arguments (a script, a message)."""
    script = (_SCRIPT * 12)[:1870]
    message = "Fix the parser for nested quotes; add tests for the empty-input case"
    return (
        f'cd /work/project && python3 -c "{script}" | tee out.txt && '
        f"git add -A && git commit -m '{message}' && git log --oneline -3"
    )


def dense_line() -> str:
    """About 100 short commands in 2 KB: PIECES over and over."""
    pieces: list[str] = []
    while len(" && ".join(pieces)) < 2048:
        pieces.append(PIECES[len(pieces) % len(PIECES)])
    return " && ".join(pieces)[:2048].rsplit(" && ", 1)[0]


def distinct_dense_line() -> str:
    """About 100 short commands in 2 KB, PIECES with numbered arguments: few repeat, so a
    cache of what a line repeats cannot help."""
    pieces: list[str] = []
    while len(" && ".join(pieces)) < 2048:
        pieces.append(_NUMBERED[len(pieces) % len(_NUMBERED)].format(n=len(pieces)))
    return " && ".join(pieces)[:2048].rsplit(" && ", 1)[0]


def rule_sets() -> dict[str, list[Rule]]:
    """Named rule sets: the benchmark's, the bypass tests', and every Bash rule the tests
    write, as deny, as ask, as allow and mixed."""
    found = _test_rules()
    behaviors: tuple[Behavior, ...] = ("deny", "ask", "allow")
    mixed = [_as(rule, behaviors[i % 3]) for i, rule in enumerate(found)]
    return {
        "benchmark": benchmark_rules(),
        "rm -rf (disallowedTools)": rules_from_disallowed_tools(
            {"bash": ["rm -rf"]}, DISALLOWED_SOURCE
        ),
        "Bash(rm:*)": rules_from_permissions({"deny": ["Bash(rm:*)"]}, SETTINGS),
        "disallowedTools": rules_from_disallowed_tools(
            {"bash": ["rm -rf", "git push --force", "curl * | sh", "/etc/shadow", "--no-verify"]},
            DISALLOWED_SOURCE,
        ),
        "globs": rules_from_permissions(
            {
                "deny": ["Bash(r?:*)", "Bash(git * --force)", "Bash(-rf)"],
                "ask": ["Bash(*url:*)", "Bash(git push:*)"],
                "allow": ["Bash", "Bash(git status)"],
            },
            SETTINGS,
        ),
        "test rules as deny": [_as(rule, "deny") for rule in found],
        "test rules as ask": [_as(rule, "ask") for rule in found],
        "test rules as allow": [_as(rule, "allow") for rule in found],
        "test rules mixed": mixed,
    }


def corpus() -> list[str]:
    """Every line: the benchmark's, each string in the permission tests, joins of them, and
    lines of random shell words (broken ones too: a reader must fail the same way)."""
    strings = _test_strings()
    lines = [*PIECES, dense_line(), distinct_dense_line(), typical_line(), *strings]
    short = [s for s in strings if len(s) < 80] + PIECES
    chance = random.Random(11)
    for _ in range(300):
        parts = [
            chance.choice(_WRAPS).format(chance.choice(short)) for _ in range(chance.randint(2, 6))
        ]
        lines.append("".join(part + chance.choice(_JOINERS) for part in parts).rstrip())
    for _ in range(400):
        count = chance.randint(1, 30)
        lines.append(" ".join(chance.choice(_SHELL_WORDS) for _ in range(count)))
    return list(dict.fromkeys(lines))


def decision_record(decision: Decision) -> dict[str, Any]:
    rule = decision.rule
    return {
        "outcome": decision.outcome,
        "reason": decision.reason,
        "rule": None if rule is None else [rule.text, rule.behavior, rule.source],
        "part": decision.part,
        "unresolved": decision.unresolved,
    }


def command_record(command: Command) -> dict[str, Any]:
    return {
        "words": [[word.text, word.problem] for word in command.words],
        "text": command.text,
        "hidden": command.hidden,
        "unseen": command.unseen,
        "runs": command.runs.value,
        "via": command.via,
        "inner": [command_record(inner) for inner in command.inner],
        "runs_code": command.runs_code,
        "carries": [command_record(carried) for carried in command.carries],
    }


def record(root: Path) -> list[dict[str, str]]:
    """For each corpus line: its outcomes under each rule set (a letter each: Deny, Ask,
    Allow, No match), and digests of the full decisions and of the parsed commands."""
    from caretz.permissions.shell import parse_command_line

    rulesets = [RuleSet(rules, root, home=str(root / "home")) for rules in rule_sets().values()]
    entries = []
    for line in corpus():
        decisions = [decision_record(r.check("bash", {"command": line}, root)) for r in rulesets]
        parsed = [command_record(command) for command in parse_command_line(line)]
        entries.append(
            {
                "line": line,
                "outcomes": "".join(OUTCOME_LETTERS[d["outcome"]] for d in decisions),
                "decided": digest(decisions),
                "parsed": digest(parsed),
            }
        )
    return entries


def digest(data: object) -> str:
    text = json.dumps(data, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _as(rule: Rule, behavior: Behavior) -> Rule:
    return dataclasses.replace(rule, behavior=behavior)


def _test_strings() -> list[str]:
    strings: list[str] = []
    for name in _TEST_FILES:
        tree = ast.parse((ROOT / name).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value:
                strings.append(node.value)
    return list(dict.fromkeys(strings))


def _test_rules() -> list[Rule]:
    rules: list[Rule] = []
    for text in _test_strings():
        if not text.startswith("Bash("):
            continue
        try:
            rules.append(parse_rule(text, "deny", SETTINGS))
        except RuleError:
            continue
    for text in ("rm -rf", "git push --force", "curl * | sh", "/etc/shadow", "rm"):
        rules += rules_from_disallowed_tools({"bash": [text]}, DISALLOWED_SOURCE)
    return rules


if __name__ == "__main__":
    recorded = {"rule_sets": list(rule_sets()), "entries": record(RECORDED_ROOT)}
    RECORDED.write_text(json.dumps(recorded, indent=1) + "\n", "utf-8")
    print(f"recorded {RECORDED}")
