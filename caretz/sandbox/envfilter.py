"""The environment a shell command gets: caretz's own, minus every secret it holds.

A command's output goes to the model and into events.jsonl, so `echo $ANTHROPIC_API_KEY`
must print nothing. A variable is dropped when caretz's one table of secrets
(caretz/secrets.py) says its name or its value is a secret: a secret word in the name
(`DB_PASS`, `GITHUB_TOKEN`), a CI or CLI token name (`SYSTEM_ACCESSTOKEN`, `BW_SESSION`,
`OP_SESSION_*`, `CI_JOB_JWT`), a value shaped like a key or token (`github_pat_…`,
`glpat-…`, `sk_live_…`, a JWT, a key file's JSON, `Bearer …`) or a URL carrying a
password. The names below are dropped too, and so are the configured providers' key
variables, whatever their names. The user's `shellEnv` list passes chosen names through
anyway. The filter applies in every sandbox mode, `off` included; hooks get the same one.

Commands also get a plain terminal (`TERM=dumb`, `NO_COLOR=1`, no variable that forces
colour): their output is read by a model, and escape codes are noise to it. A name in
`shellEnv` keeps the user's own value instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase
from functools import lru_cache

from caretz import secrets
from caretz.lazy_dataclass import lazy_dataclass

# Broader than the table's names: an environment can lose a variable it did not need
# more safely than a text can lose words.
SECRET_NAME_PATTERNS: tuple[str, ...] = (
    "*_API_KEY", "*_APIKEY", "*_KEY", "*_KEYS", "*_KEY_ID", "*_TOKEN", "*_TOKENS", "*SECRET*",
    "*PASSWORD*", "*PASSWD*", "*_PASS", "*_PWD", "*PASSPHRASE*", "*PRIVATE_KEY*", "*CREDENTIAL*",
    "*_AUTH", "*_COOKIE", "*_DSN", "*CONNECTION_STRING*", "*WEBHOOK*", "ANTHROPIC_*KEY*",
    "API_KEY", "APIKEY", "TOKEN", "AUTH_TOKEN", "*ACCESSTOKEN*", "*AUTHTOKEN*", "*_SESSION_TOKEN",
    "*_PAT",
)  # fmt: skip

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

# What a command's environment says about its terminal, unless `shellEnv` names it.
PLAIN_TERMINAL: dict[str, str] = {"TERM": "dumb", "NO_COLOR": "1"}
COLOUR_FORCING: tuple[str, ...] = ("FORCE_COLOR", "CLICOLOR_FORCE", "PY_COLORS", "TTY_COMPATIBLE")


@lru_cache(maxsize=1024)
def is_secret_name(name: str) -> bool:
    if name in secrets.SHELL_VARIABLES:
        return False
    upper = name.upper()
    if upper in SECRET_NAMES or any(fnmatchcase(upper, p) for p in SECRET_NAME_PATTERNS):
        return True
    return secrets.is_secret_name(name)


@lru_cache(maxsize=1024)  # the same environment, command after command
def holds_credentials(value: str) -> bool:
    """Whether a value has a secret's shape (a key, a token, a URL with a password)."""
    return secrets.holds_secret("", value.strip())


@lazy_dataclass(frozen=True)
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

    def for_command(self, environ: Mapping[str, str]) -> dict[str, str]:
        """`apply`, then a plain terminal: TERM=dumb, NO_COLOR=1, nothing forcing colour
        (each unless `shellEnv` names it)."""
        env = self.apply(environ)
        for name in COLOUR_FORCING:
            if name not in self.allow:
                env.pop(name, None)
        for name, value in PLAIN_TERMINAL.items():
            if name not in self.allow or name not in env:
                env[name] = value
        return env

    def dropped(self, environ: Mapping[str, str]) -> list[str]:
        """The names `apply` leaves out (names only, never values), sorted."""
        return sorted(name for name, value in environ.items() if not self.keeps(name, value))
