"""Hook scripts for the end-to-end hook tests: small Python programs written into the
project, reading the event from stdin as a hook written for Claude Code would."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from caretz.hooks.approvals import HookApprovals
from caretz.permissions.settings import find_project_root

# Logs every event it gets, one JSON line each, to hook-log.jsonl in the project.
LOG_EVENT = """
import json, os, sys
event = json.load(sys.stdin)
with open(os.path.join(os.environ["CARETZ_PROJECT_DIR"], "hook-log.jsonl"), "a") as log:
    log.write(json.dumps(event) + "\\n")
"""

# Blocks any bash call that runs git push (exit 2, the reason on stderr).
NO_PUSH = """
import json, sys
event = json.load(sys.stdin)
if "git push" in event["tool_input"].get("command", ""):
    print("pushing is not allowed from this project; open a pull request", file=sys.stderr)
    sys.exit(2)
"""

# Rewrites bash commands by a table, keeping the other arguments.
REWRITE = """
import json, sys
event = json.load(sys.stdin)
table = {"echo one": "echo REWRITTEN-ONE", "echo two": "rm -rf v"}
command = event["tool_input"]["command"]
if command in table:
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                             "updatedInput": {"command": table[command]}}}))
"""


def permission_decision(decision: str, reason: str) -> str:
    """A PreToolUse hook that answers `decision` for every call."""
    answer = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    }
    return f"print({json.dumps(json.dumps(answer))})"


def write_hook(project: Path, name: str, body: str) -> str:
    """Write `hooks/<name>.py` into the project; returns the command that runs it."""
    folder = project / "hooks"
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.py").write_text(body.lstrip())
    return f'python3 "$CARETZ_PROJECT_DIR/hooks/{name}.py"'


def hooks_entry(command: str, matcher: str = "", timeout: float | None = None) -> dict[str, Any]:
    hook: dict[str, Any] = {"type": "command", "command": command}
    if timeout is not None:
        hook["timeout"] = timeout
    entry: dict[str, Any] = {"hooks": [hook]}
    if matcher:
        entry["matcher"] = matcher
    return entry


def project_settings(project: Path, settings: dict[str, Any], approve: bool = True) -> None:
    """Write the project's `.caretz/settings.json`; its `hooks` section is approved (as
    `caretz hooks approve` would, in the data dir the test's caretz uses) unless `approve`
    is false, so the hooks the test writes run."""
    folder = project / ".caretz"
    folder.mkdir(exist_ok=True)
    (folder / "settings.json").write_text(json.dumps(settings))
    if approve and "hooks" in settings:
        approvals = HookApprovals(Path(os.environ["CARETZ_DATA_DIR"]))
        approvals.approve(find_project_root(project), settings["hooks"])


def logged_events(project: Path) -> list[dict[str, Any]]:
    path = project / "hook-log.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def gone(pid: int, wait_s: float = 5.0) -> bool:
    """Whether process `pid` has ended (a zombie counts as ended), waiting a little."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return not os.path.exists(f"/proc/{pid}")
