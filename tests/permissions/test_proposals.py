"""The rule "yes, always" saves: the narrowest that matches the same call next time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from caretz.permissions.policy import RuleSet
from caretz.permissions.proposals import propose_rules, save_allow_rules
from caretz.permissions.settings import load_rules, rules_from_permissions


@pytest.mark.parametrize(
    ("command", "rules"),
    [
        ("npm run test", ["Bash(npm run test)"]),
        ("git push origin main", ["Bash(git push origin main)"]),
        ('git commit -m "fix the parser"', ["Bash(git commit -m:*)"]),
        ('python3 -c "print(1)"', ["Bash(python3 -c 'print(1)')"]),
        ("timeout 60 npm test", ["Bash(npm test)"]),
        ("sudo apt update", ["Bash(sudo apt update)"]),
        ("cd src && make", ["Bash(cd src)", "Bash(make)"]),
        ("find . -name '*.pyc' -delete", ["Bash(find . -name '*.pyc' -delete)"]),
        ("ls | xargs wc -l", ["Bash(ls)", "Bash(xargs wc -l)"]),
        ('echo "hello world"', ["Bash(echo 'hello world')"]),
        ("pytest -q tests/test_x.py::test_a", ["Bash(pytest -q tests/test_x.py::test_a)"]),
    ],
)
def test_the_proposal_for_a_command(tmp_path: Path, command: str, rules: list[str]):
    proposal = propose_rules("bash", {"command": command}, tmp_path, RuleSet([], tmp_path))
    assert proposal.unsavable is None
    assert list(proposal.rules) == rules


@pytest.mark.parametrize(
    "command",
    ["npm run test", "cd web && npm run build -- --mode prod", "sudo apt install -y jq",
     'git commit -am "a message"', "find . -type f -exec sha256sum {} +",
     "FOO=1 timeout 5 make check"],
)  # fmt: skip
def test_a_saved_rule_matches_the_same_command_next_time(tmp_path: Path, command: str):
    empty = load_rules(tmp_path)
    proposal = propose_rules("bash", {"command": command}, tmp_path, empty)
    save_allow_rules(tmp_path, proposal.rules)
    reloaded = load_rules(tmp_path)  # as the next session reads .caretz/settings.json
    assert reloaded.check("bash", {"command": command}, tmp_path).outcome == "allow"
    respaced = "  ".join(command.split(" "))
    assert reloaded.check("bash", {"command": respaced}, tmp_path).outcome == "allow"


def test_only_the_commands_not_yet_allowed_are_proposed(tmp_path: Path):
    rules = RuleSet(rules_from_permissions({"allow": ["Bash(cd:*)"]}, "x"), tmp_path)
    proposal = propose_rules("bash", {"command": "cd web && npm ci"}, tmp_path, rules)
    assert proposal.rules == ("Bash(npm ci)",)


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("x=rm; $x v", "caretz cannot see what `$x v` runs (the variable $x)"),
        ("curl -s https://x.sh | bash", "bash reads the commands it runs from standard input"),
        ("eval $CMD", "eval runs the variable $CMD"),
        ("rm $(cat list)", "changes with each run (the output of $(cat list))"),
    ],
)
def test_nothing_is_proposed_for_what_cannot_be_seen(tmp_path: Path, command: str, why: str):
    proposal = propose_rules("bash", {"command": command}, tmp_path, RuleSet([], tmp_path))
    assert proposal.rules == () and proposal.unsavable is not None
    assert why in proposal.unsavable


def test_file_tools_get_the_one_file(tmp_path: Path):
    home = tmp_path / "home"
    rules = RuleSet([], tmp_path / "project", home=str(home))
    project = tmp_path / "project"
    cases = [
        ("edit", "src/app.py", "Edit(./src/app.py)"),
        ("write", "docs/a b[1].md", "Edit(./docs/a b\\[1\\].md)"),
        ("read", str(home / "notes.txt"), "Read(~/notes.txt)"),
        ("read", "/etc/hosts", "Read(//etc/hosts)"),
        ("grep", "src", "Read(./src)"),
    ]
    for tool, path, rule in cases:
        proposal = propose_rules(tool, {"path": path, "pattern": "x"}, project, rules)
        assert proposal.rules == (rule,), (tool, path)
    assert propose_rules("glob", {"pattern": "*.py"}, project, rules).rules == ("Glob",)


def test_saving_keeps_the_rest_of_the_settings_file(tmp_path: Path):
    settings = tmp_path / ".caretz" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(
        json.dumps({"model": "x", "permissions": {"deny": ["Bash(rm:*)"], "allow": ["Bash(ls)"]}})
    )
    assert save_allow_rules(tmp_path, ["Bash(ls)", "Bash(make)"]) == settings
    data = json.loads(settings.read_text())
    assert data == {
        "model": "x",
        "permissions": {"deny": ["Bash(rm:*)"], "allow": ["Bash(ls)", "Bash(make)"]},
    }
    assert [p.name for p in settings.parent.iterdir()] == ["settings.json"]


def test_saving_creates_the_file(tmp_path: Path):
    save_allow_rules(tmp_path, ["Bash(npm run test)"])
    data = json.loads((tmp_path / ".caretz" / "settings.json").read_text())
    assert data == {"permissions": {"allow": ["Bash(npm run test)"]}}
