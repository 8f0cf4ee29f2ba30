"""A `Bash(git push:*)` deny through the real CLI: every indirection is refused in `-p`.

The workspace is a git repository whose remote is a bare repository beside it. The model
asks for each bypass form (git's aliases and config variables, the plumbing that pushes,
shell state, wrappers); a headless run denies each one (what would ask is denied), the
model reads why, the result object lists every denial, and the remote never gets a push.
An ordinary `git status` runs.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.e2e.conftest import Caretz
from tests.modelserver import ModelServer, calls, text

PUSH = "git push origin HEAD:refs/heads/main"
FORMS = [
    "git -c alias.p=push p origin HEAD:refs/heads/main",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push git p origin main",
    "GIT_CONFIG_PARAMETERS=\"'alias.p=push'\" git p origin HEAD:refs/heads/main",
    "git send-pack ../origin.git HEAD:refs/heads/main",
    "git -c core.hooksPath=hooks commit -q --allow-empty -m x",
    f"git rebase -x '{PUSH}' HEAD~1",
    f"git -c core.sshCommand='sh -c \"{PUSH}\"' fetch ssh://h/x",
    f"git -c core.fsmonitor='{PUSH}' status",
    "export PATH=$PWD/evil:$PATH; git status",
    "hash -p ./evil/git git; git status",
    "shopt -s expand_aliases\nalias g='git '\ng push origin HEAD:refs/heads/main",
    "source ./pusher.sh; git status",
    f"script -qc '{PUSH}' /dev/null",
    f"setarch x86_64 -R {PUSH}",
    f"strace -f -o /dev/null {PUSH}",
    f"/lib64/ld-linux-x86-64.so.2 /usr/bin/{PUSH}",
    f"gdb -batch -ex 'shell {PUSH}'",
    f"vim -E -s -c '!{PUSH}' -c 'qa!'",
    f"sed -n '1e {PUSH}' README",
    f"tar cf /dev/null README --checkpoint=1 --checkpoint-action=exec='{PUSH}'",
    f"npx -c '{PUSH}'",
    f"ssh host {PUSH}",
]


def repository(workspace: Path) -> Path:
    """The workspace as a repository with two commits; its remote, a bare one beside it."""
    remote = workspace.parent / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    git = ["git", "-C", str(workspace)]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    for args in (["config", "user.email", "a@b"], ["config", "user.name", "a"],
                 ["remote", "add", "origin", "../origin.git"]):  # fmt: skip
        subprocess.run([*git, *args], check=True)
    for content in ("one\n", "two\n"):
        (workspace / "README").write_text(content)
        subprocess.run([*git, "add", "README"], check=True)
        subprocess.run([*git, "commit", "-qm", content], check=True)
    (workspace / "pusher.sh").write_text(f"git() {{ command {PUSH}; }}\n")
    return remote


def test_each_git_push_bypass_is_denied_in_a_headless_run(
    caretz: Caretz, server: ModelServer, workspace: Path
):
    remote = repository(workspace)
    (workspace / ".caretz").mkdir()
    settings = {"permissions": {"deny": ["Bash(git push:*)"]}}
    (workspace / ".caretz" / "settings.json").write_text(json.dumps(settings))
    commands = [*FORMS, "git status --short"]
    server.add(calls(*[("bash", {"command": command}) for command in commands]), text("done"))

    run = caretz("-p", "publish the branch", "--output", "json")

    assert run.code == 0, run.stderr
    last = server.requests[1].messages[-1]["content"]
    results = [block for block in last if block.get("type") == "tool_result"]
    assert len(results) == len(commands)
    for command, result in zip(FORMS, results, strict=False):
        assert result["is_error"] is True, command
        content = result["content"]
        assert "did not run" in content or "refused" in content, (command, content)
        assert "Bash(git push:*)" in content, (command, content)
    assert results[-1].get("is_error") is not True  # git status runs
    summary = json.loads(run.stdout.splitlines()[-1])
    denied = [denial["input"] for denial in summary["permission_denials"]]
    assert denied == [form.replace("\n", " ") for form in FORMS]  # one line each
    pushed = subprocess.run(["git", "-C", str(remote), "rev-parse", "-q", "--verify", "main"],
                            capture_output=True)  # fmt: skip
    assert pushed.returncode != 0, "something reached the remote"
