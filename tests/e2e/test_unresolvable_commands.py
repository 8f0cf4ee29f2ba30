"""A `Bash(git push:*)` deny through the real CLI holds against what caretz cannot read.

The profile denies `git push`; the workspace is a repository whose remote is a bare one
beside it (tests/e2e/test_permission_indirections.py's). The model runs the forms that
once pushed past the rule: a wrapper caretz does not know (prlimit, setpriv, one of the
project's), xargs filling a shell's command line from its input, ed's `!`, zip's test
command, a Makefile the line itself writes, inline Python, a computed program name. A
headless run refuses each with one line naming the rule and why the command cannot be
read; the remote never gets a push. Everyday commands (git status, ls, grep) run, and so
does the project's own code (`make lint`, a script), which no rule reads and the
sandbox holds; inline code the profile allows by name (`Bash(python3 -c:*)`) runs too.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.e2e.conftest import Caretz
from tests.e2e.test_permission_indirections import PUSH, repository
from tests.modelserver import ModelServer, calls, text

FORMS = [
    f"echo '{PUSH}' | xargs -I{{}} sh -c '{{}}'",
    f"prlimit --nofile=1024 {PUSH}",
    f"setpriv --no-new-privs {PUSH}",
    f"printf '!{PUSH}\\nq\\n' | ed -s README",
    f"zip -q -T -TT '{PUSH} #' out.zip README",
    f"printf 'push:\\n\\t{PUSH}\\n' > Makefile.push && make -s -f Makefile.push push",
    f"perl -e 'system(\"{PUSH}\")'",
    f"./wrap {PUSH}",
    "x=git; ./wrap $x push origin HEAD:refs/heads/main",
]
EVERYDAY = ["git status --short", "ls", "grep -c two README", "make lint", "./check.sh",
            "python3 -c 'print(6 * 7)'"]  # fmt: skip


def test_what_caretz_cannot_read_is_refused_in_a_headless_run(
    caretz: Caretz, server: ModelServer, workspace: Path
):
    remote = repository(workspace)
    (workspace / "Makefile").write_text("lint:\n\t@echo lint ok\n")
    for name, body in (("wrap", 'exec "$@"'), ("check.sh", "echo checked")):
        (workspace / name).write_text(f"#!/bin/sh\n{body}\n")
        (workspace / name).chmod(0o755)
    rules = {"deny": ["Bash(git push:*)"], "allow": ["Bash(python3 -c:*)"]}
    caretz.write_config({"profiles": {"general": {"permissions": rules}}})
    commands = [*FORMS, *EVERYDAY]
    server.add(calls(*[("bash", {"command": command}) for command in commands]), text("done"))

    run = caretz("-p", "publish the branch", "--output", "json")

    assert run.code == 0, run.stderr
    last = server.requests[1].messages[-1]["content"]
    results = [block for block in last if block.get("type") == "tool_result"]
    assert len(results) == len(commands)
    for command, result in zip(FORMS, results, strict=False):
        content = result["content"]
        assert result["is_error"] is True, command
        assert "did not run" in content and "Bash(git push:*)" in content, (command, content)
        assert "caretz cannot tell what" in content, (command, content)
    for command, result in zip(EVERYDAY, results[len(FORMS) :], strict=True):
        assert result.get("is_error") is not True, (command, result["content"])
    lint, check, inline = (result["content"] for result in results[-3:])
    assert "lint ok" in lint and "checked" in check and "42" in inline
    summary = json.loads(run.stdout.splitlines()[-1])
    assert [denial["input"] for denial in summary["permission_denials"]] == FORMS
    pushed = subprocess.run(["git", "-C", str(remote), "rev-parse", "-q", "--verify", "main"],
                            capture_output=True)  # fmt: skip
    assert pushed.returncode != 0, "something reached the remote"
