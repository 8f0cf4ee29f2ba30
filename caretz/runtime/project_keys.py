"""The environment a project's configuration expands its `${VAR}`s in: caretz's own
provider keys, the `--env-file` variables and every secret set to nothing, so a
repository's `.mcp.json` or hook can never carry them anywhere."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from caretz.lazy import lazy_module
from caretz.secrets import holds_secret

if TYPE_CHECKING:
    from caretz.config import env_file as env_files
    from caretz.config.settings import Settings
else:
    env_files = lazy_module("caretz.config.env_file")  # the --env-file's names, when there is one

CUSTOM_KEY_ENV = "CARETZ_API_KEY"  # --base-url's key


def protected_names(settings: Settings, env: Mapping[str, str]) -> set[str]:
    """The variables that never expand into a project's configuration: every configured
    provider's key variable, caretz's ad hoc endpoint key, the variables of `--env-file`,
    and any variable the secrets table calls a secret by its name or its value."""
    names = {entry.api_key_env for entry in settings.providers.values() if entry.api_key_env}
    names |= {CUSTOM_KEY_ENV, *env_files.loaded_names()}
    names |= {name for name, value in env.items() if holds_secret(name, value)}
    return names


def project_env(settings: Settings, env: Mapping[str, str]) -> dict[str, str]:
    """The environment a project's `${VAR}`s expand in: caretz's keys and every secret set
    to nothing (so `${KEY}` is empty and `${KEY:-default}` its default)."""
    protected = protected_names(settings, env)
    return {**{k: v for k, v in env.items() if k not in protected}, **dict.fromkeys(protected, "")}
