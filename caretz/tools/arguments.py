"""A tool call's arguments checked against its tool's parameter schema: the required
names, each value's JSON type, no unknown name where the schema allows none. The
registry asks before a tool runs; a problem is a failed result the model reads."""

from __future__ import annotations

from typing import Any

_JSON_TYPE_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "object": "an object",
    "array": "an array",
}


def validate_arguments(schema: dict[str, Any], args: dict[str, Any]) -> list[str]:
    """Problems with `args` against an object schema's required, types and extra keys.

    Covers the subset the tools use: top-level properties typed string, integer,
    number, boolean, object or array.
    """
    properties: dict[str, Any] = schema.get("properties", {})
    problems = [
        f"missing required argument {name!r}"
        for name in schema.get("required", [])
        if name not in args
    ]
    for name, value in args.items():
        if name not in properties:
            if schema.get("additionalProperties") is False:
                accepted = ", ".join(properties)
                problems.append(f"unknown argument {name!r} (accepted: {accepted})")
            continue
        expected = properties[name].get("type")
        if expected and not _has_type(value, expected):
            problems.append(
                f"argument {name!r} must be {_describe(expected)}, got {_json_type(value)}"
            )
    return problems


def _has_type(value: Any, expected: str | list[str]) -> bool:
    kinds = [expected] if isinstance(expected, str) else expected
    return any(_is(value, kind) for kind in kinds)


def _is(value: Any, kind: str) -> bool:
    # bool is an int subclass in Python, but true is not a number in JSON.
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    return kind == "null" and value is None


def _describe(expected: str | list[str]) -> str:
    kinds = [expected] if isinstance(expected, str) else expected
    return " or ".join(_JSON_TYPE_NAMES.get(kind, kind) for kind in kinds)


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return f"a string ({value[:40]!r})"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__
