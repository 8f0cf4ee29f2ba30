"""What every section of profiles.json shares: camelCase keys, unknown keys refused,
strict JSON types; and a duration setting.

A leaf (it imports only pydantic and caretz.config_base): the profile schema, the loop
guard's sections and the provider resolution build on it without importing each other.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict
from pydantic.alias_generators import to_camel

from caretz.config_base import parse_duration, parse_size


class Section(BaseModel):
    """A section of profiles.json: camelCase keys, an unknown key is an error, and a value
    must be the JSON type it says (strict: `true` is no number, `"200000"` no integer)."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", strict=True
    )


def _positive_duration(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError("expected a duration such as '120s', '500ms' or '2m'")
    if parse_duration(value) <= 0:
        raise ValueError("must be longer than 0s")
    return value


# A duration longer than zero, kept as written ("120s"); `parse_duration` gives the seconds.
PositiveDuration = Annotated[str | float, BeforeValidator(_positive_duration)]


def _positive_size(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ValueError("expected a size such as '5MB', '500KB' or a number of bytes")
    if parse_size(value) <= 0:
        raise ValueError("must be more than 0 bytes")
    return value


# A size above zero, kept as written ("5MB"); `parse_size` gives the bytes.
PositiveSize = Annotated[str | int, BeforeValidator(_positive_size)]
