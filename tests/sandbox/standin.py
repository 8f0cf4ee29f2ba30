"""A stand-in for caretz: opens a sandbox, starts one command the way the bash tool does,
prints its PID and waits, so that a test can kill this process and look for orphans.

    python -m tests.sandbox.standin '{"cwd": ..., "home": ..., "backend": "bwrap"}' SCRIPT

"backend" is bwrap, landlock, or off (the sandbox off: the launcher without rules).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from caretz.sandbox.detect import BwrapProbe, check_sandbox
from caretz.sandbox.policy import SandboxMode, build_policy
from caretz.sandbox.runner import open_sandbox


def main(spec_json: str, script: str) -> None:
    spec = json.loads(spec_json)
    mode = SandboxMode.OFF if spec["backend"] == "off" else SandboxMode.WORKSPACE_WRITE
    policy = build_policy(cwd=Path(spec["cwd"]), home=Path(spec["home"]), mode=mode)
    missing = BwrapProbe(None, False, "not found on PATH")
    probe = missing if spec["backend"] == "landlock" else None
    sandbox = open_sandbox(policy, check_sandbox(policy.mode, bwrap=probe))
    assert sandbox.backend.value == {"off": "none"}.get(spec["backend"], spec["backend"])
    launch = sandbox.launch(["bash", "-c", script], dict(os.environ, HOME=spec["home"]))
    process = subprocess.Popen(
        launch.argv,
        cwd=launch.cwd,
        env=launch.env,
        pass_fds=launch.pass_fds,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    print(f"started {process.pid}", flush=True)
    process.wait()
    print("finished", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
