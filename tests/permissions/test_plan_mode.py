"""Plan mode: what runs, what is refused, and why every mode that promises no changes
keeps the promise the same way (the tools it offers, the sandbox, the decisions)."""

from __future__ import annotations

import pytest

from caretz.config.settings import sandbox_mode_for
from caretz.permissions.modes import PERMISSION_MODES, READ_ONLY_MODES, decide
from caretz.permissions.plan_mode import unproven
from caretz.permissions.policy import Decision
from caretz.sandbox.policy import SandboxMode
from caretz.tools.registry import withheld_effects

NO_RULE = Decision(outcome="no-match", reason="no rule covers it")
ALLOW = Decision(outcome="allow", reason="allowed by a rule")

# Lines a planner reads the project with: each part only reads.
READS = [
    "ls -la src",
    "cat pyproject.toml | grep -n version",
    "rg -n 'def main' caretz",
    "find . -name '*.py' -not -path './.venv/*' | head -20",
    "git log --oneline -n 5 && git status --short",
    "git --no-pager diff HEAD~1 -- caretz",
    "wc -l $(git ls-files '*.py') 2>/dev/null | tail -1",
    "sed -n '10,40p' caretz/cli/__init__.py",
    "timeout 5 tree -L 2 docs",
    "find tests -name '*.py' -exec grep -l pexpect {} +",
    "echo $HOME; pwd",
]
# Lines that change something, or that caretz cannot show change nothing.
CHANGES = {
    "touch notes.md": "`touch` is not known to change nothing",
    "ls && mkdir build": "`mkdir` is not known to change nothing",
    "git push origin HEAD": "not a git command that only reads",
    "git -c core.pager=less log": "`git` runs other commands",
    "git diff --output=patch.diff": "an option that writes or runs a program",
    "echo done > status.txt": "redirect output into a file",
    "cat a >> b": "redirect output into a file",
    "sed -i 's/a/b/' setup.cfg": "an option that writes or runs a program",
    "sed 's/x/y/w copy.txt' f": "an option that writes or runs a program",
    "sort -o sorted.txt names.txt": "an option that writes or runs a program",
    "find . -name '*.pyc' -delete": "an option that writes or runs a program",
    "find . -fprint list.txt": "an option that writes or runs a program",
    "find . -exec chmod +x {} +": "`chmod` is not known to change nothing",
    "xargs -n1 rm < files.txt": "`rm …` has a word known only when it runs",
    "curl -X POST https://example.com/hook": "`curl` is not known to change nothing",
    "python3 -c 'print(1)'": "caretz cannot read what",
    "make lint": "caretz cannot read what",
    "$EDITOR notes.md": "caretz cannot read what",
    "bash -c 'ls'": "`bash` runs other commands",
    "cat $(rm -rf build)": "`rm` is not known to change nothing",
    "sort $OPTS names.txt": "caretz cannot read what",
    "kill -9 1234": "`kill` is not known to change nothing",
}


@pytest.mark.parametrize("line", READS)
def test_a_line_that_only_reads_is_shown_to_change_nothing(line):
    assert unproven(line) is None


@pytest.mark.parametrize("line,why", CHANGES.items())
def test_a_line_that_may_change_anything_is_not(line, why):
    problem = unproven(line)
    assert problem is not None and why in problem


def test_plan_mode_refuses_an_unproven_command_even_where_a_rule_allows_it():
    verdict = decide("plan", "shell", ALLOW, tool="bash", unproven="`rm` is not known")
    assert verdict.action == "refuse" and verdict.reason.startswith("plan mode: `rm`")
    assert decide("plan", "shell", NO_RULE, tool="bash").action == "run"  # shown harmless
    leaving = decide("plan", "shell", NO_RULE, tool="bash", escalate="needs the network")
    assert leaving.action == "refuse"  # nothing leaves the read-only sandbox
    assert decide("plan", "fetch", NO_RULE, tool="web_fetch").action == "ask"


def test_exit_plan_mode_runs_in_plan_mode_only():
    for mode in PERMISSION_MODES:
        verdict = decide(mode, "plan", ALLOW, tool="exit_plan_mode")
        assert verdict.action == ("run" if mode == "plan" else "refuse"), mode
        assert ("plan" in withheld_effects(mode)) is (mode != "plan")


@pytest.mark.parametrize("mode", sorted(READ_ONLY_MODES))
def test_every_mode_that_promises_no_changes_keeps_it_the_same_way(mode):
    """A mode added to READ_ONLY_MODES gets all of it: no file tool offered, no edit or
    tool outside the sandbox run (an allow rule neither), commands in the read-only
    sandbox whatever sandbox.mode says."""
    assert {"edit", "external"} <= withheld_effects(mode)
    for effect in ("edit", "external"):
        assert decide(mode, effect, ALLOW, tool="x").action == "refuse"
    for configured in ("workspace-write", "off"):
        assert sandbox_mode_for(configured, mode) is SandboxMode.READ_ONLY
    assert {"read-only", "plan"} <= READ_ONLY_MODES
