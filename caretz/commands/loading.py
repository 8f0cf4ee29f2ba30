"""The settings a command runs with: profiles.json, the `CARETZ_*` variables and its flags."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from caretz.config.settings import Settings, resolve_settings
from caretz.config_base import ConfigError
from caretz.usage_error import fail

if TYPE_CHECKING:
    from caretz.config.overrides import Flags


def load_settings(flags: Flags) -> Settings:
    return resolve_settings(flags, os.environ)


def with_settings(flags: Flags, command: Callable[[Settings], int]) -> int:
    """`command` run with the resolved settings; settings that cannot be read are one line
    and exit 2."""
    try:
        settings = load_settings(flags)
    except ConfigError as error:
        return fail(str(error))
    return command(settings)
