"""`caretz trust`: what this project's configuration lets caretz do (its allow rules,
hooks, MCP servers, command files that run shell lines), and the user's approval of it,
whole, as it is now; `--show` prints it, `--yes` approves without asking (scripts),
`--revoke` forgets every approval of the project's (docs/security.md)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from caretz.commands.loading import with_settings
from caretz.config_base import ConfigError
from caretz.permissions.project import find_project_root
from caretz.runtime import project_trust
from caretz.ui.trust_text import approval_lines
from caretz.usage_error import fail

if TYPE_CHECKING:
    from caretz.config.overrides import Flags
    from caretz.config.settings import Settings

QUESTION = "Approve this configuration, as it is now? [y/N] "
NOTHING = (
    "nothing to approve: this project brings no allow rules, hooks, MCP servers or command "
    "files that run shell lines"
)


def trust_command(flags: Flags, *, yes: bool, show: bool, revoke: bool) -> int:
    if yes + show + revoke > 1:
        return fail("--yes, --show and --revoke: give one of them")
    return with_settings(
        flags, lambda settings: trust_project(settings, yes=yes, show=show, revoke=revoke)
    )


def trust_project(
    settings: Settings,
    *,
    yes: bool = False,
    show: bool = False,
    revoke: bool = False,
    workspace: Path | None = None,
    read_line: Callable[[str], str] = input,
) -> int:
    """Show the project's configuration and approve it (asking, unless `yes`); exit 0 once
    approved, 1 when the user said no, 2 for a file caretz cannot read."""
    workspace = workspace or Path.cwd()
    if revoke:
        return revoke_approval(settings, workspace)
    try:
        trust = project_trust.project_trust(settings, workspace)
    except ConfigError as error:
        return fail(str(error))
    if not trust.config.parts():
        _say(NOTHING)
        return 0
    for line in approval_lines(trust, settings, os.environ):
        _say(line)
    if trust.approved:
        _say("approved: caretz uses it as it is now")
        return 0
    if show:
        _say("not approved: caretz leaves it out (caretz trust approves it)")
        return 0
    if not yes and not _confirmed(read_line):
        _say("not approved: caretz leaves it out")
        return 1
    project_trust.approve(settings.data_dir, trust.config)
    _say("approved: caretz uses it in each session here until any of it changes")
    return 0


def revoke_approval(settings: Settings, workspace: Path) -> int:
    root = find_project_root(workspace)
    if project_trust.revoke(settings, workspace):
        _say(f"revoked: {root}: its configuration is left out until you approve it again")
    else:
        _say(f"nothing to revoke: nothing of {root} was approved")
    return 0


def _confirmed(read_line: Callable[[str], str]) -> bool:
    try:
        answer = read_line(QUESTION)
    except (EOFError, KeyboardInterrupt):
        answer = ""
    if not sys.stdin.isatty():
        sys.stdout.write("\n")  # the answer came from a pipe, which does not echo it
    return answer.strip().lower() in ("y", "yes")


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
