"""`caretz sandbox check`: which sandbox works here and what it enforces."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from caretz.commands.loading import load_settings
from caretz.config.sandbox import installation_problem, sandbox_policy, session_programs
from caretz.config_base import ConfigError
from caretz.sandbox.detect import SandboxBackend, SandboxCheck, check_sandbox, render_check
from caretz.sandbox.policy import guarded_roots
from caretz.usage_error import fail

if TYPE_CHECKING:
    from caretz.config.overrides import Flags
    from caretz.config.settings import Settings


def sandbox_report(
    settings: Settings, workspace: Path, env: Mapping[str, str], check: SandboxCheck | None = None
) -> tuple[SandboxCheck, list[str], str | None]:
    """What sandbox works here (`check`, probed unless given), the writable roots, and why a
    session would refuse to start under it (None: it would not); raises ConfigError."""
    policy = sandbox_policy(settings, workspace, env)
    if check is None:
        check = check_sandbox(policy.mode, policy.network, programs=session_programs(policy, env))
    roots = [str(root) for root in guarded_roots(policy)]
    return check, roots, installation_problem(policy, check)


def check_sandbox_command(flags: Flags, output: str, check: SandboxCheck | None = None) -> int:
    """0 when a sandbox works here, 1 when none does. `check` replaces probing this
    machine (what another machine would find)."""
    if output not in ("text", "json"):
        return fail(f"--output {output!r}: use text or json")
    try:
        settings = load_settings(flags)
        check, roots, refused = sandbox_report(settings, Path.cwd(), os.environ, check)
    except ConfigError as error:
        return fail(str(error))
    if output == "json":
        data = {**check.as_dict(), "writable_roots": roots, "installation_problem": refused}
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        sys.stdout.write(render_check(check) + "\n")
        sys.stdout.write(f"writable: {', '.join(roots) or 'nothing'}\n")
        if refused:
            sys.stdout.write(f"error: {refused}\n")
    return 1 if check.backend is SandboxBackend.NONE or refused else 0
