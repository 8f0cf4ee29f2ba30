"""What every section of profiles.json shares, and the error a bad setting raises.

A leaf (it imports only pydantic): the profile schema, the loop guard's sections,
prices and the provider resolution all build on it without importing each other.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict
from pydantic.alias_generators import to_camel


class ConfigError(Exception):
    """A configuration problem, told in one line that names what to fix (the CLI exits 2)."""


class Section(BaseModel):
    """A section of profiles.json: camelCase keys, an unknown key is an error, and a value
    must be the JSON type it says (strict: `true` is no number, `"200000"` no integer)."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", strict=True
    )


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


def _positive_duration(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError("expected a duration such as '120s', '500ms' or '2m'")
    if parse_duration(value) <= 0:
        raise ValueError("must be longer than 0s")
    return value


# A duration longer than zero, kept as written ("120s"); `parse_duration` gives the seconds.
PositiveDuration = Annotated[str | float, BeforeValidator(_positive_duration)]


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


def _positive_size(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ValueError("expected a size such as '5MB', '500KB' or a number of bytes")
    if parse_size(value) <= 0:
        raise ValueError("must be more than 0 bytes")
    return value


# A size above zero, kept as written ("5MB"); `parse_size` gives the bytes.
PositiveSize = Annotated[str | int, BeforeValidator(_positive_size)]
