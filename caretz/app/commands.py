"""Custom commands as a session runs them: a `/name args` prompt found in the catalog and
prepared (its rules and model checked), before anything is sent.

Every front end finds a command here: `-p "/name"` before its session opens (so a bad
name leaves nothing behind), the REPL and `AppSession.submit` on a running session. A
`/name` that is one of the interactive session's own commands, or no command at all,
is a ConfigError; nothing is sent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from caretz.config_base import ConfigError
from caretz.lazy import lazy_module
from caretz.runtime import project_trust

if TYPE_CHECKING:
    from caretz.runtime import custom_commands
    from caretz.slash_commands import names as slash_names
else:
    # The custom commands' modules: only for a `/name` prompt.
    slash_names = lazy_module("caretz.slash_commands.names")
    custom_commands = lazy_module("caretz.runtime.custom_commands")

if TYPE_CHECKING:
    from caretz.config.settings import Settings
    from caretz.runtime.custom_commands import PreparedCommand


def find_command(
    settings: Settings, workspace: Path, prompt: str, env: Mapping[str, str]
) -> PreparedCommand | None:
    """The custom command a `/name args` prompt runs (None: an ordinary prompt); raises
    ConfigError for a `/name` that is no custom command, or one that cannot run."""
    if not prompt.lstrip().startswith("/"):
        return None  # an ordinary prompt: the custom commands' modules are not loaded
    parsed = slash_names.parse(prompt.strip())
    if parsed is None or parsed[0].startswith("mcp__"):
        return None  # an ordinary prompt, or an MCP server's prompt: the session runs it
    if has_skill(settings, workspace, parsed[0], env):
        return None  # a skill's: the session runs it
    return named_command(settings, workspace, parsed, slash_names.RESERVED_NAMES, env)


def has_skill(settings: Settings, workspace: Path, name: str, env: Mapping[str, str]) -> bool:
    """Whether `/name` runs a skill (which comes before a custom command of its name)."""
    if name in slash_names.RESERVED_NAMES:
        return False
    home = Path(env.get("HOME") or Path.home())
    if not project_trust.has_skills(workspace, home, settings.data_dir):
        return False
    skills = project_trust.skill_set(settings, workspace, home).skills
    return name in skills and skills[name].user_invocable


def named_command(
    settings: Settings,
    workspace: Path,
    parsed: tuple[str, str],
    reserved: Iterable[str],
    env: Mapping[str, str],
) -> PreparedCommand:
    """The custom command `parsed` (name, arguments) names, prepared; raises ConfigError
    for a built-in or unknown name, or a command that cannot run."""
    name, arguments = parsed
    reserved = list(reserved)
    if name in reserved:
        raise ConfigError(
            f"/{name} is a command of the interactive session and does not run with -p "
            "(nothing was sent)"
        )
    catalog = custom_commands.catalog_for(settings, workspace, reserved)
    command = catalog.get(name)
    if command is None and name.lower() in catalog.refused:
        raise ConfigError(f"/{name}: {catalog.refused[name.lower()]} (nothing was sent)")
    if command is None:
        folders = f".caretz/commands/, {settings.config_path.parent / 'commands'}"
        where = f"no custom command of that name in {folders} or .claude/commands/"
        unknown = slash_names.unknown_command(name, catalog.commands, where)
        raise ConfigError("; ".join([unknown, *catalog.folders_refused]))
    return custom_commands.prepare(settings, command, arguments, env)


def allowed_tools(prepared: PreparedCommand) -> str:
    """The command's `allowed-tools`, as written: `Bash(git log:*), Read`."""
    return ", ".join(rule.text for rule in prepared.rules)
