"""Authentication: none when the model's key is in the environment (or the profile's
provider needs none); otherwise the variable to set, as ACP's `env_var` method."""

from __future__ import annotations

from collections.abc import Mapping

from acp.schema import AuthEnvVar, AuthMethodAgent, EnvVarAuthMethod, TerminalAuthMethod

from caretz.config.settings import Settings


def missing_key(settings: Settings, env: Mapping[str, str]) -> str | None:
    """The one line that says which variable to set; None when the key is there."""
    name = settings.model.entry.api_key_env
    if name is None or env.get(name, "").strip():
        return None
    provider = settings.model.entry.name
    return (
        f"missing API key for provider {provider!r}: set {name} in the agent's environment "
        "(the editor's agent settings), or start caretz with --env-file"
    )


def auth_methods(
    settings: Settings, env: Mapping[str, str]
) -> list[EnvVarAuthMethod | TerminalAuthMethod | AuthMethodAgent]:
    name = settings.model.entry.api_key_env
    if name is None or missing_key(settings, env) is None:
        return []
    return [
        EnvVarAuthMethod(
            type="env_var",
            id=f"env:{name}",
            name=f"{name} in the environment",
            description=f"caretz sends {settings.model.ref} requests with the key in {name}.",
            vars=[AuthEnvVar(name=name, label=name)],
        )
    ]
