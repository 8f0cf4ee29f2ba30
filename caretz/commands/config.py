"""`caretz config show`: the resolved settings as JSON (API keys are never shown)."""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING

from caretz.commands.loading import with_settings
from caretz.config.settings import Settings
from caretz.config.show import show_settings

if TYPE_CHECKING:
    from caretz.config.overrides import Flags


def show_config(flags: Flags) -> int:
    return with_settings(flags, _show)


def _show(settings: Settings) -> int:
    sys.stdout.write(json.dumps(show_settings(settings, os.environ), indent=2, default=str) + "\n")
    return 0
