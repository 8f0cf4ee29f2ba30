"""Secrets out of text that leaves the machine: the judge's summary of a turn.

API keys, tokens, passwords and auth headers are found by their own shape (a
provider key's prefix, a JWT, a private key block) or by the name before them
(`NAME=value`, `Authorization: …`) and replaced by [redacted].
"""

from __future__ import annotations

import re
from dataclasses import dataclass

REDACTED = "[redacted]"


@dataclass(frozen=True)
class _Shape:
    """A secret recognised by its own shape (a provider key, a JWT, a key block)."""

    pattern: re.Pattern[str]
    needs: tuple[str, ...]  # lower-case: the pattern runs only when one of these occurs
    keep: int = 0  # a group kept before [redacted] (0: none)


@dataclass(frozen=True)
class _Named:
    """A secret recognised by the name before it: `NAME=value`, `Authorization: …`.

    Names are found with str.find on the lower-cased text (case-insensitive regex
    alternations are slow); `follow` must match right after a name, its group 1
    is kept and the rest becomes [redacted].
    """

    names: tuple[str, ...]
    follow: re.Pattern[str]


def _shape(pattern: str, *needs: str, keep: int = 0) -> _Shape:
    return _Shape(re.compile(pattern, re.DOTALL), needs, keep)


_SHAPES: list[_Shape] = [
    _shape(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)",
           "private key"),
    _shape(r"(://[^\s:/@]+:)[^\s@/]+(?=@)", "://", keep=1),  # user:password@host
    _shape(r"sk-ant-[A-Za-z0-9_\-]{8,}", "sk-ant-"),
    _shape(r"sk-(?:proj-|svcacct-|live_|test_)?[A-Za-z0-9_\-]{16,}", "sk-"),
    _shape(r"gh[pousr]_[A-Za-z0-9]{20,}", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    _shape(r"github_pat_[A-Za-z0-9_]{20,}", "github_pat_"),
    _shape(r"glpat-[A-Za-z0-9_\-]{16,}", "glpat-"),
    _shape(r"(?:AKIA|ASIA)[0-9A-Z]{16}", "akia", "asia"),
    _shape(r"xox[abprse]-[A-Za-z0-9\-]{10,}", "xox"),
    _shape(r"AIza[0-9A-Za-z_\-]{35}", "aiza"),
    _shape(r"hf_[A-Za-z0-9]{30,}", "hf_"),
    _shape(r"npm_[A-Za-z0-9]{36}", "npm_"),
    _shape(r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", "eyj"),
]  # fmt: skip

_VALUE = r"(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s\"',;}]+)"
_NAMED: list[_Named] = [
    _Named(("authorization",), re.compile(r"([ \t]*[:=][ \t]*\"?)[^\n\"']+")),
    _Named(("bearer", "token"), re.compile(r"(\s+)[A-Za-z0-9._~+/=\-]{16,}")),
    # NAME=value, NAME: value, name="value", "name": "value". The name must end with
    # the word, so that TokenError: or max_tokens=10 are left alone.
    _Named(
        (
            "token", "secret", "password", "passwd", "passphrase", "credential",
            "credentials", "apikey", "api_key", "api-key", "accesskey", "access_key",
            "access-key", "privatekey", "private_key", "private-key", "authkey", "auth_key",
        ),
        re.compile(r"([\"']?[ \t]*[:=][ \t]*)" + _VALUE),
    ),
]  # fmt: skip


def redact(text: str) -> str:
    """`text` with API keys, tokens, passwords and auth headers replaced by [redacted]."""
    lowered = _lowered(text)
    text = _redact_named(text, lowered)
    for shape in _SHAPES:
        # Gates use the text before the named pass: redacting only removes text.
        if any(needed in lowered for needed in shape.needs):
            keep = shape.keep
            text = shape.pattern.sub(
                lambda m, keep=keep: (m.group(keep) if keep else "") + REDACTED, text
            )
    return text


def _lowered(text: str) -> str:
    """`text` in lower case, character for character (so that positions still line up)."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(ch.lower()[:1] or ch for ch in text)


def _redact_named(text: str, lowered: str) -> str:
    spans: list[tuple[int, int]] = []
    for named in _NAMED:
        for name in named.names:
            start = lowered.find(name)
            while start != -1:
                match = named.follow.match(text, start + len(name))
                if match is not None:
                    spans.append((match.end(1), match.end()))
                start = lowered.find(name, start + len(name))
    if not spans:
        return text
    pieces, position = [], 0
    for start, end in sorted(spans):
        if start < position:
            continue  # overlaps a value already redacted
        pieces += [text[position:start], REDACTED]
        position = end
    pieces.append(text[position:])
    return "".join(pieces)
