"""The error a bad setting raises, and durations as profiles.json writes them.

A leaf without pydantic: everything that reports a configuration problem imports it,
including the path that reaches the first request without validating anything. The
sections' shared pydantic base is `caretz.config_section`.
"""

from __future__ import annotations

import re


class ConfigError(Exception):
    """A configuration problem, told in one line that names what to fix (the CLI exits 2)."""


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$")


def parse_duration(value: str | float | int) -> float:
    """'15s', '500ms', '1m' or a number of seconds → seconds."""
    if isinstance(value, int | float):
        return float(value)
    match = _DURATION.match(value)
    if not match:
        raise ValueError(f"{value!r} is not a duration such as '15s', '500ms' or '1m'")
    number, unit = float(match.group(1)), match.group(2) or "s"
    return number * {"ms": 0.001, "s": 1.0, "m": 60.0}[unit]


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmg]?i?b?)\s*$", re.IGNORECASE)
_SIZE_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


def parse_size(value: str | int) -> int:
    """'5MB', '500KB', '1GB' or a number of bytes → bytes (KB, MB, GB are powers of 1024)."""
    if isinstance(value, bool):
        raise ValueError("expected a size such as '5MB', '500KB' or a number of bytes")
    if isinstance(value, int):
        return value
    match = _SIZE.match(value)
    if not match:
        raise ValueError(f"{value!r} is not a size such as '5MB', '500KB' or '1GB'")
    unit = match.group(2).lower().rstrip("b").rstrip("i")
    return int(float(match.group(1)) * _SIZE_UNITS[unit])
