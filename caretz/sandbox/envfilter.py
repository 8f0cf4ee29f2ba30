"""The environment a shell command gets: caretz's own, minus every secret it holds.

A command's output goes to the model and into events.jsonl, so `echo $ANTHROPIC_API_KEY`
must print nothing. A variable is dropped when its name looks like a secret
(SECRET_NAME_PATTERNS, matched without regard to case), when it is one of the key
variables of the configured providers, or when its value is a URL carrying a
password (`postgres://user:pw@host/db`). The user's `shellEnv` list passes chosen
names through anyway. The filter applies in every sandbox mode, `off` included.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase

SECRET_NAME_PATTERNS: tuple[str, ...] = (
    "*_API_KEY",
    "*_APIKEY",
    "*_KEY",
    "*_KEYS",
    "*_KEY_ID",
    "*_TOKEN",
    "*_TOKENS",
    "*SECRET*",
    "*PASSWORD*",
    "*PASSWD*",
    "*_PASS",
    "*_PWD",
    "*PASSPHRASE*",
    "*PRIVATE_KEY*",
    "*CREDENTIAL*",
    "*_AUTH",
    "*_COOKIE",
    "*_DSN",
    "*CONNECTION_STRING*",
    "*WEBHOOK*",
    "ANTHROPIC_*KEY*",
    "API_KEY",
    "APIKEY",
    "TOKEN",
    "AUTH_TOKEN",
)

# Always dropped, whatever their names look like.
SECRET_NAMES: tuple[str, ...] = (
    "CARETZ_API_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "AZURE_CLIENT_SECRET",
    "OP_SERVICE_ACCOUNT_TOKEN",
)

# scheme://user:password@host: the password part is non-empty.
_URL_WITH_PASSWORD = re.compile(r"^[a-z][a-z0-9+.-]*://[^/@:\s]*:[^/@\s]+@", re.IGNORECASE)


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    return upper in SECRET_NAMES or any(fnmatchcase(upper, p) for p in SECRET_NAME_PATTERNS)


def holds_credentials(value: str) -> bool:
    return bool(_URL_WITH_PASSWORD.match(value.strip()))


@dataclass(frozen=True)
class EnvFilter:
    """`secret_names`: the configured providers' key variables; `allow`: the `shellEnv` list."""

    secret_names: frozenset[str] = frozenset()
    allow: frozenset[str] = frozenset()

    @classmethod
    def create(cls, secret_names: Iterable[str] = (), allow: Iterable[str] = ()) -> EnvFilter:
        return cls(frozenset(n for n in secret_names if n), frozenset(allow))

    def keeps(self, name: str, value: str) -> bool:
        if name in self.allow:
            return True
        if name in self.secret_names or is_secret_name(name):
            return False
        return not holds_credentials(value)

    def apply(self, environ: Mapping[str, str]) -> dict[str, str]:
        return {name: value for name, value in environ.items() if self.keeps(name, value)}

    def dropped(self, environ: Mapping[str, str]) -> list[str]:
        """The names `apply` leaves out (names only, never values), sorted."""
        return sorted(name for name, value in environ.items() if not self.keeps(name, value))
