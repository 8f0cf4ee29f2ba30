"""`caretz hooks list` and `caretz hooks approve`, and `/hooks` in the interactive session:
the hooks that apply here, the profile's and the project's, with the project's approval."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from caretz.text import one_line
from caretz.usage_error import fail

if TYPE_CHECKING:
    from caretz.config.settings import Settings
    from caretz.hooks.matching import HookFile
    from caretz.ui.session_control import SessionControl

COMMAND_CHARS = 120
APPROVED = "approved"
NOT_APPROVED = "not approved: they do not run until you approve them with caretz hooks approve"


def list_hooks(settings: Settings, output: str, workspace: Path | None = None) -> int:
    """Print the hooks that apply here; exit 2 for a hooks section caretz cannot read."""
    from caretz.config_base import ConfigError
    from caretz.runtime.hooks import hook_files

    if output not in ("text", "json"):
        return fail(f"--output {output!r}: use text or json")
    try:
        files = hook_files(settings, workspace or Path.cwd())
    except ConfigError as error:
        return fail(str(error))
    if output == "json":
        data = {"files": [file_data(file) for file in files]}
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        sys.stdout.write("".join(line + "\n" for line in hook_file_lines(files)))
    return 0


def approve_hooks(settings: Settings, workspace: Path | None = None) -> int:
    """Approve the project's `hooks` section as it is now, printing each hook approved."""
    from caretz.config_base import ConfigError
    from caretz.hooks.matching import command_hooks
    from caretz.runtime.hooks import approve_project_hooks

    try:
        file = approve_project_hooks(settings, workspace or Path.cwd())
    except ConfigError as error:
        return fail(str(error))
    where = file.source.split(":")[0]
    for event, hook in command_hooks(file):
        sys.stdout.write(f"approved {hook_line(event, hook.matcher, hook.line)}\n")
    sys.stdout.write(
        f"{where}: these hooks run in each session here, outside the sandbox, "
        "until its hooks section changes\n"
    )
    return 0


def hooks_slash(repl: SessionControl, argument: str) -> None:
    """`/hooks`: the session's hooks, as read when it started, with the project's approval."""
    if argument.strip():
        repl.error("/hooks lists the session's hooks; caretz hooks approve approves a project's")
        return
    hooks = repl.session.hooks
    files = list(hooks.files) if hooks is not None else []
    for line in hook_file_lines(files):
        style = "dim" if line.startswith("  ") else "bold"
        repl.console.print(f"[{style}]{escape(line)}[/]", highlight=False)
    if any(not file.approved for file in files):
        repl.info(
            "caretz hooks approve, then start caretz again: a session reads its hooks when "
            "it starts"
        )


def hook_file_lines(files: list[HookFile]) -> list[str]:
    """A heading a file (with the project's approval), then its hooks, indented."""
    from caretz.hooks.matching import command_hooks

    if not files:
        return ["no hooks here (profiles.json `hooks`, .caretz/settings.json `hooks`)"]
    lines = []
    for file in files:
        lines.append(f"{file.source}{_status(file)}")
        hooks = command_hooks(file)
        lines += [f"  {hook_line(event, hook.matcher, hook.line)}" for event, hook in hooks]
        if not hooks:
            lines.append("  no command hooks caretz runs")
    return lines


def hook_line(event: str, matcher: str, command: str) -> str:
    """`PreToolUse [Bash] `./check.sh``: the event, its matcher when it has one, the command."""
    scope = f" [{matcher}]" if matcher.strip() not in ("", "*") else ""
    return f"{event}{scope} `{one_line(command, COMMAND_CHARS)}`"


def file_data(file: HookFile) -> dict[str, Any]:
    from caretz.hooks.matching import command_hooks

    hooks = [
        {"event": event, "matcher": hook.matcher, "command": hook.line}
        for event, hook in command_hooks(file)
    ]
    return {"source": file.source, "approved": file.approved, "hooks": hooks}


def _status(file: HookFile) -> str:
    """The project's approval; the profile's hooks are the user's own and need none."""
    from caretz.runtime.hooks import PROJECT_SOURCE

    if file.source != PROJECT_SOURCE:
        return ""
    return f" ({APPROVED if file.approved else NOT_APPROVED})"
