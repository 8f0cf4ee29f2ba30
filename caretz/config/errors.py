"""A pydantic validation error as one line that names the key to fix.

`profiles.general.loopGuard.repeatThreshold: Input should be greater than or equal to 1`,
with a suggestion for a misspelt key.
"""

from __future__ import annotations

import difflib
import json
import re
import types
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from caretz.text import shorten

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def describe_validation_error(root: type[BaseModel], error: ValidationError) -> str:
    """`profiles.general.loopGuard.repeatThreshold: <message>` for the first bad key."""
    grouped: dict[str, list[str]] = {}
    for item in error.errors():
        path = _join_path(_walk(root, item["loc"])[0])
        message = error_message(root, item)
        if message not in grouped.setdefault(path, []):
            grouped[path].append(message)
    path, messages = next(iter(grouped.items()))
    more = len(grouped) - 1
    suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    text = "; ".join(messages) + suffix
    return f"{path}: {text}" if path else text


def error_message(root: type[BaseModel], item: Any) -> str:
    """What is wrong with one error item of a `root` model, without its location."""
    if item["type"] == "extra_forbidden":
        parent = _walk(root, item["loc"][:-1])[1]
        known = _known_keys(parent)
        close = difflib.get_close_matches(str(item["loc"][-1]), known, n=1)
        if close:
            return f"unknown key (did you mean '{close[0]}'?)"
        return f"unknown key (known keys: {', '.join(known)})" if known else "unknown key"
    expected = _EXPECTED.get(item["type"])
    if expected is not None:
        return f"expected {expected}, not {_as_json(item['input'])}"
    return str(item["msg"]).removeprefix("Value error, ")


# What a key of a JSON type holds, by pydantic's error type (strict: "200000" is no number).
_EXPECTED = {
    "bool_type": "true or false",
    "int_type": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "string_type": "a string",
    "list_type": "a list",
    "dict_type": "an object",
    "model_type": "an object",
}


def _as_json(value: Any) -> str:
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return shorten(text, 40)


def _walk(root: Any, loc: tuple[Any, ...]) -> tuple[list[str | int], Any]:
    """The JSON path of an error location, and the type found at its end.

    pydantic adds union member tags ('str', 'float') to locations; they are not
    keys of the file, so the walk stops where the types stop describing JSON.
    """
    parts: list[str | int] = []
    current: Any = root
    for part in loc:
        current = _unwrap_optional(current)
        if _is_model(current):
            field = _field_for_key(current, part)
            current = field.annotation if field is not None else None
        elif get_origin(current) in (dict, list):
            current = get_args(current)[-1]
        elif current is not None:
            break
        parts.append(part)
    return parts, _unwrap_optional(current)


def _join_path(parts: list[str | int]) -> str:
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _PLAIN_KEY.fullmatch(part):
            text += f".{part}" if text else part
        else:
            text += f"[{json.dumps(part)}]"
    return text


def _unwrap_optional(annotation: Any) -> Any:
    if get_origin(annotation) in (Union, types.UnionType):
        members = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(members) == 1:
            return members[0]
    return annotation


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _field_for_key(model: type[BaseModel], key: Any) -> Any:
    for name, field in model.model_fields.items():
        if key in (name, field.alias):
            return field
    return None


def _known_keys(annotation: Any) -> list[str]:
    if not _is_model(annotation):
        return []
    return [field.alias or name for name, field in annotation.model_fields.items()]
