"""A Codex custom agent file (`.codex/agents/NAME.toml`): `name`, `description` and
`developer_instructions` (the agent's instructions); `model` (a bare name is OpenAI's,
as Codex means it); `sandbox_mode = "read-only"` makes the agent read-only. Everything
else Codex reads there (`mcp_servers`, `skills.config`, `web_search`, a wider
`sandbox_mode`...) is left out: nothing an agent file says may widen what a session does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from caretz.agent_files.definition import NAME, AgentDefinition, AgentFileError


def parse_codex_agent(text: str, path: Path, scope: str, default_name: str) -> AgentDefinition:
    """The agent a Codex TOML file defines; raises AgentFileError naming the file."""
    import tomllib  # here: only a session with a Codex agent file reads TOML

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise AgentFileError(f"{path}: not TOML ({error})") from None
    name = _text(data, "name", path) or default_name
    if not NAME.match(name.lower()):
        raise AgentFileError(f"{path}: name {name!r} is not a name (letters, digits, - _ . :)")
    description = _text(data, "description", path)
    if not description:
        raise AgentFileError(f"{path}: description is missing (it says when to use the agent)")
    model = _text(data, "model", path) or None
    if model is not None and "/" not in model:
        model = f"openai/{model}"
    read_only = _text(data, "sandbox_mode", path) == "read-only"
    return AgentDefinition(
        name=name.lower(),
        description=description,
        prompt=_text(data, "developer_instructions", path).strip(),
        path=path,
        scope=scope,
        model=model,
        permission_mode="read-only" if read_only else None,
    )


def _text(data: dict[str, Any], key: str, path: Path) -> str:
    value = data.get(key, "")
    if not isinstance(value, str):
        raise AgentFileError(f"{path}: {key} must be a string")
    return value
