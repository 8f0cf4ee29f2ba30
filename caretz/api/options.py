"""The API's keyword arguments → `Settings`, exactly as the CLI resolves its flags: each
keyword is the flag of the same name, then the CARETZ_* variables, then the profile, then
the defaults (caretz.config.settings). A bad value is one `ConfigError` line naming the
keyword: `permission_mode='sometimes': expected one of …`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from caretz.config.overrides import read_flags
from caretz.config.settings import Settings, resolve_settings


@dataclass(frozen=True, kw_only=True)
class Options:
    """What a `Session` may set, as the flags of the same names do (None: not set)."""

    model: str | None = None
    profile: str | None = None
    loop_guard: str | None = None
    permission_mode: str | None = None
    config: str | os.PathLike[str] | None = None
    base_url: str | None = None
    reasoning: str | None = None
    max_tool_calls: int | None = None
    max_budget_usd: float | None = None
    sandbox: str | None = None
    add_dir: Sequence[str | os.PathLike[str]] | None = None
    allowed_tools: Sequence[str] | str | None = None
    disallowed_tools: Sequence[str] | str | None = None

    def flags(self) -> dict[str, Any]:
        """The options given, as the CLI's flags would carry them."""
        given: dict[str, Any] = {}
        for item in fields(self):
            value = getattr(self, item.name)
            if value is None:
                continue
            if isinstance(value, str | os.PathLike) and item.name in _LISTS:
                value = [value]  # one rule or folder, as one flag would give it
            if item.name in _LISTS:
                value = [os.fspath(each) for each in value]
            elif isinstance(value, os.PathLike):
                value = Path(value)
            given[item.name] = value
        return given


_LISTS = {"add_dir", "allowed_tools", "disallowed_tools"}


def keyword_spelling(name: str, value: Any) -> str:
    """How an error names a keyword's value: `reasoning='max'`."""
    return f"{name}={value!r}"


def resolve(options: Options, env: Mapping[str, str] | None = None) -> Settings:
    """The settings these options give in `env` (None: this process's environment);
    raises ConfigError with one line naming what to fix."""
    flags = options.flags()
    read_flags(flags, keyword_spelling)  # a bad value named as the keyword it came from
    return resolve_settings(flags, os.environ if env is None else env)
