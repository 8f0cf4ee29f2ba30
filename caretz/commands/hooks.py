"""`caretz hooks list` and `caretz hooks approve`: the hooks that apply here, the
profile's and the project's, with the project's approval."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from caretz.commands.loading import with_settings
from caretz.config_base import ConfigError
from caretz.hooks.matching import HookFile, command_hooks
from caretz.runtime.hooks import PROJECT_SOURCE, hook_files
from caretz.runtime.project_trust import approve_hooks as approve_project_hooks
from caretz.runtime.project_trust import project_trust
from caretz.ui.hook_lines import hook_file_lines, hook_line
from caretz.usage_error import fail

if TYPE_CHECKING:
    from caretz.config.overrides import Flags
    from caretz.config.settings import Settings


def hooks_command(flags: Flags, approve: bool, output: str = "text") -> int:
    """`caretz hooks list` and, with `approve`, `caretz hooks approve`."""
    return with_settings(
        flags,
        lambda settings: approve_hooks(settings) if approve else list_hooks(settings, output),
    )


def list_hooks(settings: Settings, output: str, workspace: Path | None = None) -> int:
    """Print the hooks that apply here; exit 2 for a hooks section caretz cannot read."""
    if output not in ("text", "json"):
        return fail(f"--output {output!r}: use text or json")
    try:
        files = hook_files(settings, project_trust(settings, workspace or Path.cwd()))
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
    try:
        section = approve_project_hooks(settings, workspace or Path.cwd())
    except ConfigError as error:
        return fail(str(error))
    file = HookFile(section.config, PROJECT_SOURCE)
    where = file.source.split(":")[0]
    for event, hook in command_hooks(file):
        sys.stdout.write(f"approved {hook_line(event, hook.matcher, hook.line)}\n")
    sys.stdout.write(
        f"{where}: these hooks run in each session here, outside the sandbox, "
        "until its hooks section changes\n"
    )
    return 0


def file_data(file: HookFile) -> dict[str, Any]:
    hooks = [
        {
            "event": event,
            "matcher": hook.matcher,
            "command": hook.line,
            **({"sandbox": "off"} if hook.command.sandbox == "off" else {}),  # let out
        }
        for event, hook in command_hooks(file)
    ]
    return {"source": file.source, "approved": file.approved, "hooks": hooks}
