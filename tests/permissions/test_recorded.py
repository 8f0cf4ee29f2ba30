"""The rule check decides every corpus line as it did when the record was made.

tests/data/permission_decisions.json holds, for each line of tests/permissions/corpus.py
(the benchmark's lines, every string in the permission tests, random joins of them), the
outcome under each named rule set and digests of the full decisions (outcome, reason,
rule, part, unresolved) and of every parsed command (words, problems, hidden, unseen,
runs, via, inner, what code it runs and the commands it carries). A faster reader or matcher must change none of them.
"""

from __future__ import annotations

import json
from typing import Any

from caretz.permissions.policy import RuleSet
from caretz.permissions.shell import parse_command_line
from tests.permissions.corpus import (
    OUTCOME_LETTERS,
    RECORDED,
    RECORDED_ROOT,
    command_record,
    corpus,
    decision_record,
    digest,
    rule_sets,
)


def recorded() -> dict[str, Any]:
    return json.loads(RECORDED.read_text(encoding="utf-8"))


def test_the_record_covers_the_corpus_and_the_rule_sets():
    data = recorded()
    assert data["rule_sets"] == list(rule_sets())
    assert [entry["line"] for entry in data["entries"]] == corpus()
    assert len(data["entries"]) > 1000
    # Every outcome occurs, so the record pins more than "no rule matched".
    outcomes = "".join(entry["outcomes"] for entry in data["entries"])
    assert {"D", "A", "Y", "-"} <= set(outcomes)


def test_every_decision_is_the_recorded_one():
    data = recorded()
    rulesets = {
        name: RuleSet(rules, RECORDED_ROOT, home=str(RECORDED_ROOT / "home"))
        for name, rules in rule_sets().items()
    }
    changed = []
    for entry in data["entries"]:
        line = entry["line"]
        decisions = [
            decision_record(rules.check("bash", {"command": line}, RECORDED_ROOT))
            for rules in rulesets.values()
        ]
        outcomes = "".join(OUTCOME_LETTERS[d["outcome"]] for d in decisions)
        if outcomes != entry["outcomes"] or digest(decisions) != entry["decided"]:
            changed.append((line, entry["outcomes"], outcomes, decisions))
    assert not changed, _describe(changed, list(rulesets))


def test_every_parsed_command_is_the_recorded_one():
    changed = []
    for entry in recorded()["entries"]:
        parse_command_line.cache_clear()
        parsed = [command_record(command) for command in parse_command_line(entry["line"])]
        if digest(parsed) != entry["parsed"]:
            changed.append((entry["line"], parsed))
    assert not changed, f"{len(changed)} lines now parse differently, first: {changed[0]}"


def test_a_changed_decision_is_noticed():
    """The record is no tautology: a different rule set gives different digests."""
    entry = next(e for e in recorded()["entries"] if e["line"] == "rm -fr v")
    rules = RuleSet(rule_sets()["Bash(rm:*)"][:0], RECORDED_ROOT)
    decision = decision_record(rules.check("bash", {"command": "rm -fr v"}, RECORDED_ROOT))
    assert "D" in entry["outcomes"] and decision["outcome"] == "no-match"
    assert digest([decision]) != entry["decided"]


def _describe(changed: list[Any], names: list[str]) -> str:
    line, before, now, decisions = changed[0]
    differing = [f"{name}: {decision}" for name, decision in zip(names, decisions, strict=True)]
    return (
        f"{len(changed)} lines now decide differently; first {line!r}: outcomes {before} → "
        f"{now}\n" + "\n".join(differing)
    )
