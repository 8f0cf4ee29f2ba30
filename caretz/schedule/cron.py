"""Checking a cron schedule before it reaches the crontab: five fields or a macro.

The rules are those of the crontab command itself (checked against it in the
tests): numbers, `*`, ranges, steps and lists; three-letter names for months and
weekdays wherever a number may stand; 0 and 7 are both Sunday.
"""

from __future__ import annotations

from dataclasses import dataclass

from caretz.inbound import ascii_number

MACROS = frozenset(
    {"@reboot", "@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


@dataclass(frozen=True)
class _Field:
    name: str
    low: int
    high: int
    names: tuple[str, ...] = ()


_FIELDS = (
    _Field("minute", 0, 59),
    _Field("hour", 0, 23),
    _Field("day of month", 1, 31),
    _Field("month", 1, 12, _MONTHS),
    _Field("day of week", 0, 7, _DAYS),
)


def check_schedule(text: str) -> str:
    """`text` as one clean schedule ("*/10 * * * *", "@daily"); raises ValueError saying
    what is wrong, as crontab would refuse it."""
    words = text.split()
    if len(words) == 1 and words[0].startswith("@"):
        if words[0].lower() not in MACROS:
            raise ValueError(f"{words[0]!r} is not a cron macro ({', '.join(sorted(MACROS))})")
        return words[0].lower()
    if len(words) != len(_FIELDS):
        raise ValueError(
            f"{text!r} has {len(words)} fields; a schedule has 5 (minute hour day-of-month "
            "month day-of-week), e.g. '*/10 * * * *', or is a macro such as @daily"
        )
    for word, field in zip(words, _FIELDS, strict=True):
        _check_field(word, field)
    return " ".join(words)


def _check_field(word: str, field: _Field) -> None:
    for item in word.split(","):
        try:
            _check_item(item, field)
        except ValueError as error:
            raise ValueError(f"bad {field.name} {word!r}: {error}") from None


def _check_item(item: str, field: _Field) -> None:
    span, slash, step = item.partition("/")
    if slash and (ascii_number(step) or 0) < 1:
        raise ValueError(f"the step in {item!r} must be a whole number from 1")
    if span == "*":
        return
    low, dash, high = span.partition("-")
    _number(low, field)
    if dash:
        _number(high, field)  # a range may run backwards: crontab takes 22-2 as it is
    if slash and not dash:
        raise ValueError(f"a step needs * or a range before it, not {span!r}")


def _number(text: str, field: _Field) -> int:
    if text.lower() in field.names:
        return field.names.index(text.lower()) + field.low
    value = ascii_number(text)
    if value is None:
        raise ValueError(f"{text!r} is not a number from {field.low} to {field.high}")
    if not field.low <= value <= field.high:
        raise ValueError(f"{value} is outside {field.low}-{field.high}")
    return value
