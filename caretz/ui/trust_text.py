"""What a project's configuration does, as the user approves it: `caretz trust`, the
interactive session's question at start, `caretz mcp approve`. Every allow rule, every
hook command, every MCP server's command or URL with each variable it expands (and what
it expands to: caretz's own keys expand to nothing) and the URL its headers go to, every
command file's shell lines; then what changed since the last approval. Plain lines, with
control and invisible characters shown as escapes, so nothing in a file can hide a part
of itself from the person reading it."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from caretz.hooks.matching import HookFile, command_hooks
from caretz.mcp_client.expand import MissingVariable, expand, references
from caretz.mcp_client.model import shown_command
from caretz.runtime.hooks import PROJECT_SOURCE
from caretz.runtime.project_keys import protected_names
from caretz.runtime.project_trust import ProjectTrust
from caretz.runtime.trust_notice import part_name

if TYPE_CHECKING:
    from caretz.config.settings import Settings
    from caretz.mcp_client.plan import Configured

SETTINGS = ".caretz/settings.json"
MCP_FILE = ".mcp.json"
KEY_LINE = "caretz's own key or a secret: it expands to nothing in a project's configuration"


def visible(text: str) -> str:
    """`text` with control, format and separator characters (newlines, escapes,
    right-to-left overrides, zero-width ones) written as `\\n`, `\\x1b`, `\\u202e`."""
    shown = []
    for char in text:
        if char == "\n":
            shown.append("\\n")
        elif char != " " and unicodedata.category(char)[0] in "CZ":
            shown.append(char.encode("unicode_escape").decode("ascii"))
        else:
            shown.append(char)
    return "".join(shown)


def approval_lines(trust: ProjectTrust, settings: Settings, env: Mapping[str, str]) -> list[str]:
    """What the project's configuration lets caretz do, line by line, its variables as
    they expand in `env` (caretz's keys as nothing)."""
    config = trust.config
    protected = protected_names(settings, env)
    lines = [f"The configuration of the project {visible(str(config.root))} lets caretz do more:"]
    if config.allow:
        lines.append(f"{SETTINGS}: allow rules (what they match runs without asking):")
        lines += [f"  {visible(str(rule))}" for rule in config.allow]
    if config.hooks is not None and config.hooks.config:
        lines.append(f"{SETTINGS}: hooks (commands caretz runs with your rights on its events):")
        file = HookFile(config.hooks.config, PROJECT_SOURCE)
        lines += [
            f"  {hook_text(event, hook.matcher, hook.line)}" for event, hook in command_hooks(file)
        ]
    for plugin in config.plugins:
        for hooks in plugin.hooks:
            lines.append(f"{visible(hooks.source)}: hooks (commands caretz runs on its events):")
            file = HookFile(hooks.config, hooks.source)
            lines += [f"  {hook_text(e, h.matcher, h.line)}" for e, h in command_hooks(file)]
    for server in config.servers:
        lines += server_lines(server, protected, env)
    for command in config.commands:
        runs = "runs shell lines before its prompt is sent" if command.shell else "grants tools"
        lines.append(f"{visible(command.path)}: /{visible(command.name)} {runs}")
        lines += [f"  !`{visible(line)}`" for line in command.shell]
        if command.allowed_tools:
            lines.append(f"  allowed-tools: {visible(', '.join(command.allowed_tools))}")
    for skill in config.skills:
        lines.append(
            f"{visible(skill.path)}: skill {visible(skill.name)} grants tools while it runs"
        )
        lines.append(f"  allowed-tools: {visible(', '.join(skill.allowed_tools))}")
    lines.append("Its deny and ask rules apply whether you approve it or not.")
    if trust.changed:
        changed = ", ".join(part_name(key, config) for key in trust.changed)
        lines.append(f"Changed since you approved it: {changed}")
    return lines


def hook_text(event: str, matcher: str, command: str) -> str:
    scope = f" [{visible(matcher)}]" if matcher.strip() not in ("", "*") else ""
    return f"{event}{scope} `{visible(command)}`"


def server_lines(server: Configured, protected: set[str], env: Mapping[str, str]) -> list[str]:
    """A `.mcp.json` server: what it runs or where it connects, its env and headers, and
    each variable it expands."""
    entry, name = server.entry, visible(server.name)
    where = visible(server.source) if server.source.startswith("plugin ") else MCP_FILE
    lines = []
    if entry.transport == "stdio":
        command = visible(shown_command(entry.command or "", entry.args))
        lines.append(f"{where}: server {name} runs `{command}` outside the sandbox")
        lines += [f"  env {visible(key)}={visible(value)}" for key, value in entry.env.items()]
    else:
        url = entry.url or ""
        lines.append(f"{where}: server {name} connects to {visible(url)} ({entry.transport})")
        to = _expanded(url, protected, env)
        for key, value in entry.headers.items():
            lines.append(f"  header {visible(key)}: {visible(value)} (sent to {visible(to)})")
    lines += [f"  {line}" for line in variable_lines(server, protected, env)]
    return lines


def variable_lines(server: Configured, protected: set[str], env: Mapping[str, str]) -> list[str]:
    """One line for each variable the entry expands: what it expands to, in words."""
    found: dict[str, str | None] = {}
    for text in _strings(server):
        for variable, default in references(text):
            found.setdefault(variable, default)
    lines = []
    for variable, default in found.items():
        if variable in protected:
            said = KEY_LINE
        elif env.get(variable):
            said = "from your environment"
        elif default is not None:
            said = f"not set: its default {visible(default)!r}"
        else:
            said = "not set: the server does not start until it is"
        lines.append(f"${{{visible(variable)}}}: {said}")
    return lines


def _strings(server: Configured) -> Iterator[str]:
    entry = server.entry
    yield from (entry.command or "", *entry.args, *entry.env.values())
    yield from (entry.url or "", *entry.headers.values())


def _expanded(url: str, protected: set[str], env: Mapping[str, str]) -> str:
    """Where a URL goes once expanded as a project's is (caretz's keys as nothing)."""
    values = {**env, **dict.fromkeys(protected, "")}
    try:
        return expand(url, values, "url")
    except MissingVariable:
        return url
