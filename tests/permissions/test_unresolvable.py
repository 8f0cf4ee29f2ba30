"""A deny rule holds by construction: what may run a command caretz does not read asks.

With `Bash(git push:*)` denied, each runnable form is first run with real bash in a real
repository with a bare remote (tests/permissions/test_indirections.py's), to show it
really pushes; then the check must deny it (caretz reads the push) or ask (it may run
one caretz does not read: a wrapper caretz does not know, inline code, a Makefile, a
script, an editor's input, a program of the project's), which a `-p` run refuses. A
program is read as running nothing else only when it is on caretz's list of such
programs (caretz/permissions/plain.py); everything else counts as a possible runner.

The other side: with no rule, or with allow rules only, everyday commands a strong model
runs never ask (tests/permissions/everyday.py); with a deny rule, the programs known to
run nothing else still run unasked, and an allow rule naming a runner answers for what it
runs (`Bash(make test)`), while a push the line shows is still denied.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from caretz.permissions.command import Command
from caretz.permissions.launch import _BUILDERS, SHELLS
from caretz.permissions.plain import PLAIN
from caretz.permissions.policy import RuleSet
from caretz.permissions.settings import rules_from_permissions
from caretz.permissions.shell import parse_command_line
from caretz.permissions.wrappers import SPECS
from tests.permissions.everyday import EVERYDAY, RUNNERS, TYPICAL_ALLOWS
from tests.permissions.test_indirections import PUSH, pushes_for_real

# (command, "deny" or "ask", the program it needs to run for real, or None: not run here)
FORMS = [
    # the forms that pushed past the deny rule
    (f"echo '{PUSH}' | xargs -I{{}} sh -c '{{}}'", "ask", "xargs"),
    (f"prlimit --nofile=1024 {PUSH}", "ask", "prlimit"),
    (f"setpriv --no-new-privs {PUSH}", "ask", "setpriv"),
    (f"printf '!{PUSH}\\nq\\n' | ed -s README", "ask", "ed"),
    (f"zip -q -T -TT '{PUSH} #' ../x.zip README", "ask", "zip"),
    # inline code in interpreters and programs that run commands from their arguments
    (f"awk 'BEGIN {{ system(\"{PUSH}\") }}'", "ask", "awk"),
    (f"perl -e 'system(\"{PUSH}\")'", "ask", "perl"),
    (f"python3 -c 'import os; os.system(\"{PUSH}\")'", "ask", "python3"),
    (f"echo '!{PUSH}' | ex -s", "ask", "vim"),
    (f"LESSOPEN='|{PUSH} %s' less README", "ask", None),
    ("sort --compress-program=./c.sh -S 1 README", "ask", None),
    ("rg --pre ./pre.sh x", "ask", None),
    # code in files caretz does not read
    (f"printf 'all:\\n\\t{PUSH}\\n' > Makefile && make -s", "ask", "make"),
    (f"printf '{PUSH}\\n' > p.sh && source p.sh", "ask", "git"),
    (f"printf '#!/bin/sh\\n{PUSH}\\n' > ls && chmod +x ls && ./ls", "ask", "git"),
    ("git config alias.p '!git push' && git p origin HEAD:refs/heads/main", "ask", "git"),
    ("RIPGREP_CONFIG_PATH=./rc rg x", "ask", None),
    ("npm run deploy", "ask", None),
    ("python3 deploy.py", "ask", None),
    # shell evaluation: what caretz reads is denied, what it cannot read asks
    (f'f() {{ "$@"; }}; f {PUSH}', "ask", "git"),
    (f"f() {{ {PUSH}; }}; f", "deny", "git"),
    ("$(echo git) push origin HEAD:refs/heads/main", "ask", "git"),
    (f"echo $({PUSH})", "deny", "git"),
    (f"eval \"$(echo '{PUSH}')\"", "ask", "git"),
    (f"eval '{PUSH}'", "deny", "git"),
    (f"sh <<'EOF'\n{PUSH}\nEOF", "deny", "git"),
    ("sh <<EOF\n$(echo git) push origin HEAD:refs/heads/main\nEOF", "ask", "git"),
    (f"command {PUSH}", "deny", "git"),
    (f"builtin eval '{PUSH}'", "deny", "git"),
    (f"exec {PUSH}", "deny", "git"),
    (f"alias x='{PUSH}'", "deny", None),
    # wrappers caretz reads
    (f"env -S '{PUSH}'", "deny", "env"),
    (f"nice -n 5 {PUSH}", "deny", "nice"),
    (f"timeout 60 {PUSH}", "deny", "timeout"),
    (f"stdbuf -oL {PUSH}", "deny", "stdbuf"),
    (f"nohup {PUSH}", "deny", "nohup"),
    (f"time {PUSH}", "deny", "git"),
    (f"ionice -c3 {PUSH}", "deny", "ionice"),
    (f"find . -maxdepth 0 -exec sh -c '{PUSH}' \\;", "deny", "find"),
    (f"sudo -u ann {PUSH}", "deny", None),
    (f"watch -n 1 -g '{PUSH}'", "deny", None),
    (f"parallel ::: '{PUSH}'", "ask", None),
    (f"busybox sh -c '{PUSH}'", "deny", None),
    (f"vim -c '!{PUSH}' -c 'qa!' README", "ask", None),
]


def deny_push(root: Path, *allow: str) -> RuleSet:
    rules = rules_from_permissions({"deny": ["Bash(git push:*)"], "allow": list(allow)}, "s")
    return RuleSet(rules, root)


@pytest.mark.parametrize(("command", "expected", "needs"), FORMS)
def test_each_form_is_denied_or_asks(tmp_path: Path, command: str, expected: str, needs):
    if needs is not None:
        assert shutil.which(needs), f"{needs} is needed to show the form pushes"
        assert pushes_for_real(command, tmp_path), "not a real bypass"
    decision = deny_push(tmp_path).check("bash", {"command": command}, tmp_path)
    assert decision.outcome == expected, decision.reason
    assert decision.rule is not None and decision.rule.text == "Bash(git push:*)"
    if expected == "ask":
        assert decision.unresolved, decision.reason  # one line says why it cannot be read
        assert "could match it" in decision.reason


@pytest.mark.parametrize("command", EVERYDAY)
def test_no_everyday_command_asks_without_a_deny_rule(tmp_path: Path, command: str):
    assert RuleSet([], tmp_path).check("bash", {"command": command}, tmp_path).outcome == (
        "no-match"
    )
    allows = RuleSet(rules_from_permissions({"allow": TYPICAL_ALLOWS}, "s"), tmp_path)
    assert allows.check("bash", {"command": command}, tmp_path).outcome in ("allow", "no-match")


@pytest.mark.parametrize("command", [c for c in EVERYDAY if c not in RUNNERS])
def test_programs_known_to_run_nothing_else_run_unasked_beside_a_deny_rule(tmp_path, command):
    decision = deny_push(tmp_path).check("bash", {"command": command}, tmp_path)
    assert decision.outcome == "no-match", decision.reason


@pytest.mark.parametrize("command", RUNNERS)
def test_a_runner_asks_beside_a_deny_rule_unless_an_allow_rule_names_it(tmp_path, command):
    decision = deny_push(tmp_path).check("bash", {"command": command}, tmp_path)
    assert decision.outcome == "ask", decision.reason
    vouched = deny_push(tmp_path, *TYPICAL_ALLOWS).check("bash", {"command": command}, tmp_path)
    assert vouched.outcome == "allow", vouched.reason
    assert "which covers what" in vouched.reason


def test_an_allow_rule_never_answers_for_what_the_line_shows_or_hides(tmp_path: Path):
    rules = deny_push(tmp_path, "Bash(make:*)", "Bash", "Bash(sed:*)", "Bash(python3:*)")
    # a push the line shows is denied, whatever runs beside it
    assert rules.check("bash", {"command": f"make && {PUSH}"}, tmp_path).outcome == "deny"
    # a command hidden from caretz is answered for by no allow rule, not even the bare Bash
    for hidden in (f"sed -n '1e {PUSH}' README", "x=git; $x push", f"echo '{PUSH}' | bash"):
        assert rules.check("bash", {"command": hidden}, tmp_path).outcome == "ask", hidden
    # the bare `Bash` names no runner: it answers for none of them
    bare = deny_push(tmp_path, "Bash")
    assert bare.check("bash", {"command": "make test"}, tmp_path).outcome == "ask"


def test_a_program_of_the_projects_is_not_the_one_of_that_name(tmp_path: Path):
    rules = deny_push(tmp_path)
    assert rules.check("bash", {"command": "ls -la"}, tmp_path).outcome == "no-match"
    assert rules.check("bash", {"command": "/usr/bin/ls -la"}, tmp_path).outcome == "no-match"
    for command in ("./ls -la", "bin/grep x", "/tmp/cat f", "/usr/bin/../../tmp/ls"):
        decision = rules.check("bash", {"command": command}, tmp_path)
        assert decision.outcome == "ask", command
        assert "is not the system's" in (decision.unresolved or ""), command


@pytest.mark.parametrize(
    ("command", "outcome"),
    [
        ("LANG=C sort names.txt", "no-match"),
        ("NO_COLOR=1 ls", "no-match"),
        ("GIT_AUTHOR_NAME=ann git commit -m x", "no-match"),
        ("x=1; echo $x", "no-match"),
        ("export LC_ALL=C && grep -c x f", "no-match"),
        ("RIPGREP_CONFIG_PATH=rc grep x f", "ask"),
        ("env FOO=1 grep x f", "ask"),
        ("export FOO=1; grep x f", "ask"),
        ("FOO=1; grep x f", "ask"),
        ("HOME=/tmp/h git status", "ask"),
        ("PAGER='sh -c \"git push\"' git log", "deny"),
    ],
)
def test_a_variable_set_in_the_line_counts_unless_it_is_known_harmless(tmp_path, command, outcome):
    decision = deny_push(tmp_path).check("bash", {"command": command}, tmp_path)
    assert decision.outcome == outcome, decision.reason


# The programs caretz reads further whose reader finds them running nothing else when they
# are given plain operands: each for a reason.
RUN_NOTHING_WITH_OPERANDS = {
    "alias",  # `alias x` prints it; a body (`x=…`) is read
    "awk", "gawk", "mawk", "nawk", "busybox-awk",  # a program without system(), pipes, -f
    "sed",  # a script without `e` (or -f)
    "tar",  # no program options
    "find",  # no -exec, -ok or -delete
    "man",  # no -P: the pager is the user's own
    "hash", "shopt", "enable",  # without -p, expand_aliases, -f
}  # fmt: skip


def is_plain(command: Command) -> bool:
    return command.hidden is None and command.unseen is None and not command.inner


def test_a_program_runs_nothing_else_only_by_the_list_or_its_readers_word():
    """The closed default: a program is read as running nothing else when the list of such
    programs names it, or when caretz's reader for it has read its words and found
    nothing it runs. Any other name, and any new reader that passes a program through
    without saying what it runs, fails here."""
    readers = sorted(set(SHELLS) | set(_BUILDERS) | set(SPECS))
    plain = {name for name in readers if is_plain(parse_command_line(f"{name} a-file b")[0])}
    assert plain == RUN_NOTHING_WITH_OPERANDS
    assert all(is_plain(parse_command_line(f"{name} a-file")[0]) for name in PLAIN if name != "[")
    for name in ("make", "frobnicate", "prlimit", "setpriv", "python3", "node", "my-tool",
                 "pytest", "cargo", "go", "docker", "gh", "less", "patch", "openssl"):  # fmt: skip
        (command,) = parse_command_line(f"{name} a-file")
        assert command.unseen is not None and command.hidden is None, name


@pytest.mark.parametrize("shell", ["bash", "sh", "zsh"])
def test_a_shell_running_a_script_or_a_wrapper_opening_one_may_run_anything(shell: str):
    (script,) = parse_command_line(f"{shell} deploy.sh")
    assert "runs the script deploy.sh" in (script.unseen or "")
    for wrapper in ("chroot /", "unshare -r", "setarch x86_64", "fakeroot"):
        (opened,) = parse_command_line(wrapper)
        assert "opens a shell" in (opened.hidden or ""), wrapper
