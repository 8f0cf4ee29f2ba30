"""The CARETZ_* environment layer, validated by pydantic-settings.

Imported only when one of its variables is set (see `config.read_env_layer`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic_settings import BaseSettings, EnvSettingsSource, SettingsConfigDict

from caretz.config import BudgetUsd, ModelRef, ToolCallLimit
from caretz.guard.model import Mode
from caretz.messages import Reasoning


class EnvSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CARETZ_", env_ignore_empty=True, extra="ignore")

    profile: str | None = None
    model: ModelRef | None = None
    reasoning: Reasoning | None = None
    max_tool_calls: ToolCallLimit | None = None
    max_budget_usd: BudgetUsd | None = None
    loop_guard: Mode | None = None

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: Any,
        env_settings: Any,
        dotenv_settings: Any,
        file_secret_settings: Any,
    ) -> tuple[Any, ...]:
        # Values arrive through MappingEnvSource, never straight from os.environ.
        return (init_settings,)


class MappingEnvSource(EnvSettingsSource):
    """Reads a given mapping (tests pass a dict) instead of os.environ."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        self._environ = environ
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return {key.lower(): value for key, value in self._environ.items() if value != ""}
