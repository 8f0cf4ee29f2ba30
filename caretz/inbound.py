"""Data from outside caretz, made into caretz's own values in one place.

A model's tool calls and replies, a provider's stream, an MCP server's tools and
results, a web page and a hook's output are read here, and only here, from JSON and
text into Python values; whatever cannot be taken becomes `BadInput` with the one line
that says why, which the caller turns into a failed tool result or its own one line:

- JSON is read strictly: no NaN or Infinity (no JSON has them), no key given twice
  (which one counts would depend on the reader), no nesting deeper than `MAX_DEPTH`,
  no text longer than the caller's limit, no number Python cannot hold;
- text is valid Unicode: a lone surrogate (a code point no UTF-8 text can carry, which
  a JSON escape such as `\\ud800` can still produce) becomes U+FFFD, or refuses the
  value where what was sent must be run as it was (a tool call's arguments);
- a port is ASCII digits (`²²`, `٢٢`, `+22`, `2_2` are not ports).

A leaf: imports nothing from caretz but the other leaves. tests/test_architecture_boundaries.py
keeps JSON parsing of outside data here, so new code cannot read it another way.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any, Literal

from caretz.text import shorten

MAX_DEPTH = 100  # arrays and objects inside each other; a tool's arguments need a few
MAX_JSON_CHARS = 32 << 20  # one JSON text from outside, unless its reader says less
CLIP_CHARS = 200  # what was sent, quoted in a message, is cut to this
REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")  # as JSON writes one

Surrogates = Literal["replace", "refuse"]


class BadInput(ValueError):
    """Data from outside that caretz does not take; its text is the one line saying why."""


# --- text ------------------------------------------------------------------------------


def clean_text(text: str) -> str:
    """`text` as valid Unicode: each lone surrogate becomes U+FFFD."""
    return _SURROGATE.sub(REPLACEMENT, text) if has_surrogate(text) else text


def text(value: Any) -> str:
    """A piece of text from outside (a streamed delta, a result's text block, a page, a
    hook's output) as valid Unicode; anything that is not a string is no text."""
    return clean_text(value) if isinstance(value, str) else ""


def utf8(line: str) -> bytes:
    """`line` as UTF-8, whatever it holds: a lone surrogate (a file name read with
    surrogateescape, say) becomes U+FFFD instead of an error. For what caretz writes: its
    log lines and its requests."""
    try:
        return line.encode("utf-8")
    except UnicodeEncodeError:
        return clean_text(line).encode("utf-8")


def has_surrogate(text: str) -> bool:
    """Whether `text` holds a lone surrogate. The regex alone reads 100 KB of ASCII in a
    millisecond; these two checks are C loops over the text."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


# --- numbers ---------------------------------------------------------------------------


def ascii_number(text: str) -> int | None:
    """`text` as a whole number when it is ASCII digits only (at most 18 of them), else
    None: `str.isdigit` is true of `²` and `int` reads `٢٢`, `+2`, ` 2` and `2_2`."""
    if 0 < len(text) <= 18 and text.isascii() and text.isdigit():
        return int(text)
    return None


def port_number(text: str) -> int | None:
    """A TCP port written as ASCII digits, 1 to 65535; None for anything else."""
    number = ascii_number(text) if len(text) <= 5 else None
    return number if number is not None and 0 < number < 65536 else None


# --- JSON ------------------------------------------------------------------------------


def load_json(
    raw: str | bytes,
    what: str = "the JSON",
    *,
    surrogates: Surrogates = "replace",
    limit: int = MAX_JSON_CHARS,
) -> Any:
    """One JSON text from outside as Python values (dict, list, str, int, float, bool,
    None), read strictly (see the module's doc); raises BadInput naming `what`."""
    if isinstance(raw, bytes | bytearray):
        raw = bytes(raw).decode("utf-8", "replace")
    if len(raw) > limit:
        raise BadInput(f"{what} {_is(what)} {len(raw):,} characters long, more than {limit:,}")
    try:
        value = _DECODER.decode(raw)
    except json.JSONDecodeError as error:
        # Some messages end in "at" already ("Unterminated string starting at").
        where = "char" if error.msg.endswith(" at") else "at char"
        raise BadInput(
            f"{what} {_is(what)} not valid JSON ({error.msg} {where} {error.pos})"
        ) from None
    except RecursionError:
        raise BadInput(_too_deep(what)) from None
    except _Refused as refused:
        raise BadInput(f"{what} {_is(what)} not valid JSON: {refused}") from None
    except ValueError:  # a number of more digits than Python reads
        raise BadInput(f"{what} {_has(what)} a number too long to read") from None
    if has_surrogate(raw) or ("\\u" in raw and _ESCAPED_SURROGATE.search(raw)):
        return checked(value, what, surrogates=surrogates)
    if raw.count("[") + raw.count("{") > MAX_DEPTH:  # else it cannot nest that deep
        _within_depth(value, what)  # no text to fix: the nesting is all there is to check
    return value


def load_json_at(text: str, start: int, what: str = "the JSON") -> tuple[Any, int]:
    """The JSON value that starts at `start` in `text` and where it ends (text may follow
    it); raises BadInput. For replies that embed JSON in prose (a judge's verdict)."""
    try:
        value, end = _DECODER.raw_decode(text, start)
    except json.JSONDecodeError as error:
        raise BadInput(f"{what} {_is(what)} not valid JSON ({error.msg})") from None
    except RecursionError:
        raise BadInput(_too_deep(what)) from None
    except _Refused as refused:
        raise BadInput(f"{what} {_is(what)} not valid JSON: {refused}") from None
    except ValueError:
        raise BadInput(f"{what} {_has(what)} a number too long to read") from None
    return checked(value, what), end


def checked(value: Any, what: str = "the value", *, surrogates: Surrogates = "replace") -> Any:
    """`value` (already read from JSON by a library: an MCP result, a tool's schema) as
    caretz takes data from outside: JSON's types only (a tuple becomes a list), nesting
    within MAX_DEPTH, finite numbers, valid Unicode; raises BadInput naming `what`."""
    fix = _refuse_surrogates(what) if surrogates == "refuse" else clean_text
    return _checked(value, what, fix, 0)


def tool_arguments(raw: str, sent: Any = None) -> tuple[dict[str, Any], str | None]:
    """A tool call's arguments: the JSON text the model streamed (`raw`), or the object a
    server sent whole when nothing streamed (`sent`). ({}, what was wrong) when they
    cannot be taken as they are; never raises. A lone surrogate refuses them: a command
    or a file's text must run as the model wrote it, or not at all."""
    if not raw.strip() and isinstance(sent, dict) and sent:
        try:
            return checked(sent, "the arguments", surrogates="refuse"), None
        except BadInput as problem:
            return {}, str(problem)
    if not raw.strip():
        return {}, None
    try:
        value = load_json(raw, "the arguments", surrogates="refuse")
    except BadInput as problem:
        return {}, f"{problem}: {clipped(raw)}"
    if not isinstance(value, dict):
        kind = type(value).__name__
        return {}, f"the arguments must be a JSON object, not {kind}: {clipped(raw)}"
    return value, None


def clipped(raw: str) -> str:
    """What was sent, quoted in a message: shortened, and valid Unicode."""
    return clean_text(shorten(raw, CLIP_CHARS))


class _Refused(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Refused(f"the key {clean_text(key)!r} is given twice")
            seen.add(key)
    return value


def _no_constant(name: str) -> Any:
    raise _Refused(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"{text} is a number JSON cannot carry")
    return value


def _within_depth(value: Any, what: str) -> None:
    """BadInput when arrays and objects nest deeper than MAX_DEPTH; level by level."""
    level, current = 0, [value] if isinstance(value, dict | list) else []
    while current:
        if level >= MAX_DEPTH:
            raise BadInput(_too_deep(what))
        nested = []
        for item in current:
            children = item.values() if isinstance(item, dict) else item
            nested += [child for child in children if isinstance(child, dict | list)]
        level, current = level + 1, nested


# One decoder for all: json.loads with hooks would build a new one at every call.
_DECODER = json.JSONDecoder(
    object_pairs_hook=_unique_keys, parse_constant=_no_constant, parse_float=_finite
)


def _is(what: str) -> str:
    return "are" if what.endswith("s") else "is"


def _has(what: str) -> str:
    return "have" if what.endswith("s") else "has"


def _too_deep(what: str) -> str:
    return f"{what} {_is(what)} nested deeper than {MAX_DEPTH} levels"


def _refuse_surrogates(what: str) -> Callable[[str], str]:
    def refuse(text: str) -> str:
        found = _SURROGATE.search(text)
        if found is None:
            return text
        code = f"\\u{ord(found.group()):04x}"
        raise BadInput(
            f"{what} {_has(what)} a lone surrogate ({code}), a code point that is no "
            "character and that no UTF-8 text can carry; send valid Unicode"
        )

    return refuse


def _checked(value: Any, what: str, fix: Callable[[str], str], depth: int) -> Any:
    if isinstance(value, str):
        return fix(value) if has_surrogate(value) else value
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise BadInput(f"{what} {_has(what)} a number JSON cannot carry ({value})")
        return value
    if depth >= MAX_DEPTH and isinstance(value, dict | list | tuple):
        raise BadInput(_too_deep(what))
    if isinstance(value, dict):
        result = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise BadInput(f"{what} {_has(what)} an object key that is no string ({key!r})")
            result[fix(key)] = _checked(item, what, fix, depth + 1)
        return result
    if isinstance(value, list | tuple):
        return [_checked(item, what, fix, depth + 1) for item in value]
    raise BadInput(f"{what} {_has(what)} a {type(value).__name__}, which is no JSON value")
