"""A deny on `git push` holds against git's own indirections, shell state and wrappers.

Each runnable form is first run with real bash in a real repository with a bare remote,
to show that it really pushes: the list holds real bypasses. Then the rule check must
refuse it (deny) or, where what it runs cannot be read before it runs, ask (which a `-p`
run denies); no allow rule may let an unreadable one through. Ordinary uses of the same
programs stay allowed by their allow rules.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from caretz.permissions.policy import RuleSet
from caretz.permissions.settings import rules_from_permissions

PUSH = "git push origin HEAD:refs/heads/main"

# (command, "deny" or "ask", the program it needs to run for real, or None: not run here)
FORMS = [
    # git's own indirections
    ("git -c alias.p=push p origin HEAD:refs/heads/main", "deny", "git"),
    (f"git -c alias.p='!{PUSH}' p", "deny", "git"),
    ("git -c alias.P=push P origin HEAD:refs/heads/main", "deny", "git"),
    ("GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push git p origin "
     "HEAD:refs/heads/main", "ask", "git"),
    ("export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push; git p origin "
     "HEAD:refs/heads/main", "ask", "git"),
    ("GIT_CONFIG_PARAMETERS=\"'alias.p=push'\" git p origin HEAD:refs/heads/main", "ask", "git"),
    ("env GIT_CONFIG_PARAMETERS=\"'alias.p=push'\" git p origin HEAD:refs/heads/main", "ask",
     "git"),
    ("git send-pack ../origin.git HEAD:refs/heads/main", "deny", "git"),
    ("git http-push https://example.com/r.git main", "deny", None),
    ("git -c core.hooksPath=hooks commit -q --allow-empty -m x", "ask", "git"),
    (f"git rebase -x '{PUSH}' HEAD~1", "deny", "git"),
    (f"git rebase --exec='{PUSH}' HEAD~1", "deny", "git"),
    (f"git -c core.sshCommand='sh -c \"{PUSH}\"' fetch ssh://h/x", "deny", "git"),
    (f"git -c core.pager='{PUSH}' -p log", "deny", None),
    (f"git -c core.fsmonitor='{PUSH}' status", "ask", None),
    ("git --config-env=alias.p=PUSH_ALIAS p", "ask", None),
    (f"GIT_SSH_COMMAND='sh -c \"{PUSH}\"' git fetch ssh://h/x", "deny", "git"),
    (f"GIT_PAGER='{PUSH}' git -p log", "deny", None),
    ("GIT_PAGER=$PAGER_OF_CHOICE git log", "ask", None),
    ("git --exec-path=./evil push", "deny", None),
    (f"git bisect run {PUSH}", "deny", None),
    (f"git submodule foreach '{PUSH}'", "deny", None),
    # shell state
    ("export PATH=$PWD/evil:$PATH; git status", "ask", "git"),
    ("PATH=$PWD/evil:$PATH; git status", "ask", "git"),
    ("hash -p ./evil/git git; git status", "ask", "git"),
    ("export BASH_ENV=./env.sh; bash -c true", "ask", "git"),
    ("source ./pusher.sh; git status", "ask", "git"),
    (". ./pusher.sh && git status", "ask", "git"),
    ("shopt -s expand_aliases\nalias g='git '\ng push origin HEAD:refs/heads/main", "ask", "git"),
    ("enable -f ./push.so push; push", "ask", None),
    (f"bash -O expand_aliases -c '{PUSH}'", "ask", None),
    # wrappers
    (f"script -qc '{PUSH}' /dev/null", "deny", "script"),
    (f"setarch x86_64 -R {PUSH}", "deny", "setarch"),
    (f"strace -f -o /dev/null {PUSH}", "deny", "strace"),
    (f"ltrace -o /dev/null {PUSH}", "deny", None),
    (f"/lib64/ld-linux-x86-64.so.2 /usr/bin/{PUSH}", "deny", "git"),
    (f"/lib64/ld-linux-x86-64.so.2 --preload ./x.so /usr/bin/{PUSH}", "ask", None),
    (f"gdb -batch -ex 'shell {PUSH}'", "ask", "gdb"),
    (f"vim -E -s -c '!{PUSH}' -c 'qa!'", "ask", "vim"),
    (f"vim +'!{PUSH}' README", "ask", None),
    (f"sed -n '1e {PUSH}' README", "ask", "sed"),
    (f"echo '{PUSH}' | sed 's/.*/&/e'", "ask", "sed"),
    (f"tar cf /dev/null README --checkpoint=1 --checkpoint-action=exec='{PUSH}'", "ask", "tar"),
    (f"tar cf /dev/null README --to-command='{PUSH}'", "ask", None),
    (f"npx -c '{PUSH}'", "deny", "npx"),
    (f"npx --yes {PUSH}", "deny", None),
    (f"flock ../lock {PUSH}", "deny", "flock"),
    (f"flock ../lock -c '{PUSH}'", "deny", "flock"),
    (f"unshare -r {PUSH}", "deny", "unshare"),
    (f"chroot / {PUSH}", "deny", None),
    (f"firejail --quiet {PUSH}", "deny", None),
    (f"busybox sh -c '{PUSH}'", "deny", None),
    (f"watch -n 1 {PUSH}", "deny", None),
    (f"parallel ::: '{PUSH}'", "ask", None),
    (f"su -c '{PUSH}' ann", "deny", None),
    (f"runuser -u ann -- {PUSH}", "deny", None),
    (f"systemd-run --user --wait {PUSH}", "deny", None),
    (f"ssh host {PUSH}", "deny", None),
    (f"ssh -o ProxyCommand='{PUSH}' host", "ask", None),
    (f"expect -c 'spawn {PUSH}'", "ask", None),
    (f"nsenter -t 1 -m {PUSH}", "deny", None),
    (f"sg users -c '{PUSH}'", "deny", None),
    (f"xvfb-run -a {PUSH}", "deny", None),
]  # fmt: skip

ALLOW_ALL = [
    "Bash(git:*)", "Bash(sed:*)", "Bash(tar:*)", "Bash(export:*)", "Bash(source:*)",
    "Bash(bash:*)", "Bash(hash:*)", "Bash(shopt:*)", "Bash(alias:*)", "Bash(g:*)",
    "Bash(gdb:*)", "Bash(vim:*)", "Bash(parallel:*)", "Bash(expect:*)", "Bash(enable:*)",
    "Bash(push:*)", "Bash(ssh:*)", "Bash(echo:*)", "Bash(strace:*)",
]  # fmt: skip


def pushes_for_real(command: str, root: Path) -> bool:
    """Run `command` in a repository whose remote is a bare one; whether main reached it."""
    shutil.copytree(_template(), root, dirs_exist_ok=True, symlinks=True)
    remote, work = root / "origin.git", root / "work"
    subprocess.run(
        ["bash", "-c", command], cwd=work, stdin=subprocess.DEVNULL, capture_output=True,
        timeout=60,
    )  # fmt: skip
    found = subprocess.run(["git", "rev-parse", "-q", "--verify", "refs/heads/main"], cwd=remote,
                           capture_output=True)  # fmt: skip
    return found.returncode == 0


@functools.cache
def _template() -> Path:
    """The repository and its bare remote, made once and copied for each form."""
    root = Path(tempfile.mkdtemp(prefix="caretz-push-"))
    atexit.register(shutil.rmtree, root, True)
    remote, work = root / "origin.git", root / "work"
    git = ["git", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q", "--bare", str(remote)], check=True)
    subprocess.run([*git, "init", "-q", str(work)], check=True)
    for args in (["config", "user.email", "a@b"], ["config", "user.name", "a"],
                 ["remote", "add", "origin", "../origin.git"]):  # fmt: skip
        subprocess.run(["git", *args], cwd=work, check=True)
    for text in ("one\n", "two\n"):
        (work / "README").write_text(text)
        subprocess.run(["git", "add", "README"], cwd=work, check=True)
        subprocess.run(["git", "commit", "-qm", text], cwd=work, check=True)
    (work / "hooks").mkdir()
    (work / "evil").mkdir()
    _script(work / "hooks" / "post-commit", PUSH)
    _script(work / "evil" / "git", "exec /usr/bin/git push origin HEAD:refs/heads/main")
    (work / "env.sh").write_text(PUSH + "\n")
    (work / "pusher.sh").write_text(f"git() {{ command {PUSH}; }}\n")
    return root


def _script(path: Path, body: str) -> None:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def deny_push(root: Path) -> RuleSet:
    return RuleSet(rules_from_permissions({"deny": ["Bash(git push:*)"]}, "s"), root)


@pytest.mark.parametrize(("command", "expected", "needs"), FORMS)
def test_each_form_is_refused_and_none_is_allowed(tmp_path, command, expected, needs):
    if needs is not None:
        assert shutil.which(needs), f"{needs} is needed to show the form pushes"
        assert pushes_for_real(command, tmp_path), "not a real bypass"
    decision = deny_push(tmp_path).check("bash", {"command": command}, tmp_path)
    assert decision.outcome == expected, decision.reason
    assert decision.rule is not None and decision.rule.text == "Bash(git push:*)"
    if expected == "ask":
        assert decision.unresolved, decision.reason  # says why it cannot be read
        allow = RuleSet(rules_from_permissions({"allow": ALLOW_ALL}, "s"), tmp_path)
        assert allow.check("bash", {"command": command}, tmp_path).outcome != "allow"


ORDINARY = [
    ("git -c color.ui=always log --oneline", "Bash(git:*)"),
    ("git -c user.name=ann -c user.email=a@b commit -m x", "Bash(git:*)"),
    ("git -c alias.st=status st", "Bash(git:*)"),
    ("git -c core.pager=cat log -3", "Bash(git log:*)|Bash(git:*)|Bash(cat:*)"),
    ("git rebase -x 'npm test' HEAD~3", "Bash(git rebase:*)|Bash(npm test)"),
    ("sed -n '1,40p' src/app.py", "Bash(sed:*)"),
    ("sed -i 's/old/new/g' src/app.py", "Bash(sed:*)"),
    ("sed -e 's/e/E/g' -e '/^#/d' -e '$a\\\nend' f", "Bash(sed:*)"),
    ("sed -E 's#(a|b)#x#2;/end/q' f", "Bash(sed:*)"),
    ("tar -czf out.tgz src", "Bash(tar:*)"),
    ("tar xf archive.tar -C build", "Bash(tar:*)"),
    ("npx prettier --check .", "Bash(npx prettier:*)"),
    ("npx prettier --check .", "Bash(prettier:*)"),
    ("ssh host uptime", "Bash(ssh:*)"),
    ("strace -f -o trace.txt ls", "Bash(ls:*)"),
    ("setarch x86_64 -R ls", "Bash(ls:*)"),
    ("export NODE_ENV=test && npm test", "Bash(npm test)"),
    ("source .venv/bin/activate", "Bash(source .venv/bin/activate)"),
    ("vim README", "Bash(vim:*)"),
    ("GIT_PAGER=cat git log --oneline", "Bash(git log:*)|Bash(cat:*)"),
    ("GIT_EDITOR=true git rebase --continue", "Bash(git rebase:*)|Bash(true)"),
]


@pytest.mark.parametrize(("command", "allow"), ORDINARY)
def test_ordinary_uses_stay_allowed(tmp_path, command, allow):
    rules = rules_from_permissions({"allow": [*allow.split("|"), "Bash(export:*)"]}, "s")
    rules += rules_from_permissions({"deny": ["Bash(git push:*)"]}, "s")
    decision = RuleSet(rules, tmp_path).check("bash", {"command": command}, tmp_path)
    assert decision.outcome == "allow", decision.reason
