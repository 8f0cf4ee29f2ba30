"""The CARETZ_* variables as Overrides, read by pydantic-settings.

Import this only when there is something to validate (a profile file, or a value the
plain checks of config/flags.py leave to the model): pydantic-settings is a noticeable
share of start-up.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError
from pydantic_settings import BaseSettings, EnvSettingsSource, SettingsConfigDict

from caretz.config.errors import error_message
from caretz.config.overrides import ENV_VARIABLES, Overrides
from caretz.config_base import ConfigError


class _EnvOverrides(Overrides, BaseSettings):
    """The Overrides model, filled from the environment: `CARETZ_MODEL` → `model`."""

    model_config = SettingsConfigDict(env_prefix="CARETZ_", env_ignore_empty=True)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: Any,
        env_settings: Any,
        dotenv_settings: Any,
        file_secret_settings: Any,
    ) -> tuple[Any, ...]:
        # Values arrive through _MappingEnvSource, never straight from os.environ.
        return (init_settings,)


class _MappingEnvSource(EnvSettingsSource):
    """Reads a given mapping (tests pass a dict) instead of os.environ, and of it only
    the documented variables: a flag without one (`--output`) has no CARETZ_OUTPUT."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        self._environ = environ
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return {
            key.lower(): value
            for key, value in self._environ.items()
            if key in ENV_VARIABLES and value != ""
        }


def read_env(env: Mapping[str, str]) -> Overrides:
    """The CARETZ_* layer, validated. A bad value is one line naming the variable."""
    try:
        values = _EnvOverrides(**_MappingEnvSource(_EnvOverrides, env)())
    except ValidationError as exc:
        item = exc.errors()[0]
        name = f"CARETZ_{str(item['loc'][0]).upper()}"
        raise ConfigError(f"{name}={item['input']!r}: {error_message(Overrides, item)}") from None
    return Overrides.model_construct(**values.model_dump())  # validated above
