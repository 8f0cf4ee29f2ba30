"""Every way the issue found to slip past a deny on `rm -rf` is refused, by both rule forms.

Each form is first run with real bash in a temporary directory, to show it really
deletes `v`: the list holds real bypasses, not look-alikes. Then the rule check must
refuse it (deny) or, where the command cannot be read before it runs, ask (which a
`-p` run denies). Commands that only look like rm run freely.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from caretz.permissions.policy import RuleSet
from caretz.permissions.settings import rules_from_disallowed_tools, rules_from_permissions

DISALLOWED = {"bash": ["rm -rf"], "write": ["*.env"]}

# (command, what the check must say: "deny" or "ask", whether real bash can run it here)
BYPASSES = [
    ("rm -r -f v", "deny", True),
    ("rm -fr v", "deny", True),
    ("rm --recursive --force v", "deny", True),
    ("rm -Rf v", "deny", True),
    ("rm --recur --forc v", "deny", True),
    ("x=rm; $x -rf v", "ask", True),
    ("echo cm0gLXJmIHY= | base64 -d | bash", "ask", True),
    ("find v -delete", "deny", True),
    ("$'\\x72\\x6d' -rf v", "ask", True),
    ("rm${IFS}-rf${IFS}v", "ask", True),
    ("true && bash -c 'rm -rf v'", "deny", True),
    ("env FOO=1 /bin/rm -rf v", "deny", True),
    ("echo $(rm -rf v)", "deny", True),
    ("timeout 5 rm -rf v", "deny", True),
    ("echo v | xargs rm -rf", "deny", True),
    ("sudo rm -rf v", "deny", False),  # no sudo on this machine; the check is what matters
    ("find . -name v -exec rm -rf {} +", "deny", True),
    ("eval 'rm -rf v'", "deny", True),
    ("nice -n 5 nohup /usr/bin/rm -rf v", "deny", True),
    ("sh -c \"bash -c 'rm -rf v'\"", "deny", True),
    ("\\rm -rf v", "deny", True),
    ("r''m -rf v", "deny", True),
    ("bash <<'EOF'\nrm -rf v\nEOF", "deny", True),
    ("bash <<EOF\n$(printf rm) -rf v\nEOF", "ask", True),
    ("r{m,} -rf v", "ask", True),  # brace expansion: rm r -rf v
]


def rulesets(root: Path) -> dict[str, RuleSet]:
    legacy = rules_from_disallowed_tools(DISALLOWED, "loopGuard.detectors.disallowedTools")
    modern = rules_from_permissions({"deny": ["Bash(rm:*)"]}, ".caretz/settings.json")
    return {"disallowedTools": RuleSet(legacy, root), "Bash(rm:*)": RuleSet(modern, root)}


def deletes_for_real(command: str, workdir: Path) -> bool:
    (workdir / "v").mkdir()
    (workdir / "v" / "file.txt").write_text("data")
    subprocess.run(["bash", "-c", command], cwd=workdir, capture_output=True, timeout=10)
    return not (workdir / "v").exists()


@pytest.mark.parametrize(("command", "expected", "runnable"), BYPASSES)
def test_each_bypass_form_is_refused(tmp_path: Path, command: str, expected: str, runnable: bool):
    if runnable:
        assert deletes_for_real(command, tmp_path / "run"), "not a real bypass"
    for name, rules in rulesets(tmp_path).items():
        decision = rules.check("bash", {"command": command}, tmp_path)
        assert decision.outcome == expected, (name, decision.reason)
        assert decision.rule is not None and decision.reason


@pytest.fixture(autouse=True)
def _workdir(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()


@pytest.mark.parametrize(
    "command",
    [
        "npm run format",
        "grep -rn format src/",
        "ls platform/",
        "git rm -r --cached x",
        "echo rm -rf",
    ],
)
def test_commands_that_only_look_like_rm_are_not_matched(tmp_path: Path, command: str):
    for name, rules in rulesets(tmp_path).items():
        decision = rules.check("bash", {"command": command}, tmp_path)
        assert decision.outcome == "no-match", (name, decision.reason)


def test_a_program_that_runs_scripts_asks_where_its_words_hand_it_rm(tmp_path: Path):
    """`npm run format` runs the package's script, the project's code (which the sandbox
    holds, whatever the rules say); handed `rm -rf v` in its arguments, it may run it."""
    for name, rules in rulesets(tmp_path).items():
        decision = rules.check("bash", {"command": "npm run format -- rm -rf v"}, tmp_path)
        assert decision.outcome == "ask", (name, decision.reason)
        assert "its arguments hand it `rm -rf v`" in (decision.unresolved or "")


def test_a_deny_on_rm_rf_leaves_rm_without_both_flags_alone(tmp_path: Path):
    legacy = rulesets(tmp_path)["disallowedTools"]
    assert legacy.check("bash", {"command": "rm -r build"}, tmp_path).outcome == "no-match"
    assert legacy.check("bash", {"command": "rm -- -rf"}, tmp_path).outcome == "no-match"


def test_the_reason_names_the_rule_and_its_source(tmp_path: Path):
    decision = rulesets(tmp_path)["disallowedTools"].check(
        "bash", {"command": "cd build && rm -fr dist"}, tmp_path
    )
    assert decision.outcome == "deny"
    assert decision.rule is not None and decision.rule.text == '"rm -rf"'
    assert decision.rule.source == "loopGuard.detectors.disallowedTools.bash"
    assert decision.reason == (
        '`rm -fr dist` is denied by the deny rule "rm -rf" '
        "(loopGuard.detectors.disallowedTools.bash)"
    )


def test_an_unreadable_command_asks_and_says_why(tmp_path: Path):
    decision = rulesets(tmp_path)["Bash(rm:*)"].check(
        "bash", {"command": "x=rm; $x -rf v"}, tmp_path
    )
    assert decision.outcome == "ask"
    assert decision.unresolved == "the variable $x"
    assert "could match it" in decision.reason and "Bash(rm:*)" in decision.reason


@pytest.mark.parametrize("tool", ["write", "edit"])
@pytest.mark.parametrize("path", [".env", "config/prod.env", "./deploy/../.env"])
def test_a_write_pattern_also_stops_edit(tmp_path: Path, tool: str, path: str):
    rules = rulesets(tmp_path)["disallowedTools"]
    assert rules.check(tool, {"path": path, "content": "x"}, tmp_path).outcome == "deny"
    assert rules.check(tool, {"path": "env.py", "content": "x"}, tmp_path).outcome == "no-match"


def test_a_write_through_a_symlink_to_a_protected_file_is_refused(tmp_path: Path):
    (tmp_path / ".env").write_text("KEY=1")
    (tmp_path / "link.txt").symlink_to(tmp_path / ".env")
    rules = rulesets(tmp_path)["disallowedTools"]
    decision = rules.check("write", {"path": "link.txt", "content": "x"}, tmp_path)
    assert decision.outcome == "deny"
