"""What the project's gate says in words: a part's name, and the one line a session starts
with when it leaves parts out for want of approval."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from caretz.runtime.project_trust import ProjectConfig, ProjectTrust


def part_name(key: str, config: ProjectConfig) -> str:
    """A part's key as words: `its 2 allow rules`, `MCP server docs`, `/review`."""
    if key == "allow":
        count = len(config.allow)
        return f"its {count} allow rule{'s' if count != 1 else ''}"
    if key == "hooks":
        return "its hooks"
    kind, _, name = key.partition(":")
    if kind == "plugin":
        return f"the hooks of plugin {name}"
    if kind == "skill":
        return f"the allowed-tools of skill {name}"
    return f"MCP server {name}" if kind == "mcp" else f"/{name}"


def not_approved_notice(trust: ProjectTrust) -> str:
    """The one line a session starts with when it leaves parts out for want of approval."""
    left_out = [part_name(key, trust.config) for key in trust.ignored()]
    what = ", ".join(left_out[:-1]) + " and " + left_out[-1] if len(left_out) > 1 else left_out[0]
    if trust.changed:
        changed = ", ".join(part_name(key, trust.config) for key in trust.changed)
        why = f"this project's configuration changed since you approved it ({changed})"
    else:
        why = "this project's configuration is not approved"
    return f"{why}, so caretz leaves out {what}: see what it does and approve it with: caretz trust"
