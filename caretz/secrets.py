"""What a secret looks like: caretz's table, and detect-secrets beside it.

- `redact(text)`: the text with keys, tokens, passwords and credentials replaced by
  [redacted], before it leaves the machine (the loop guard's judge summary, a goal's);
- `is_secret_name(name)`: whether an environment variable (or a config key) of that
  name holds a secret, so that the shell a command runs in does not inherit it;
- `holds_secret(name, value)`: the name says so, or the value holds a secret.

A name is secret by its words: its last word is one of SECRET_WORDS (`DB_PASS`,
`GITHUB_TOKEN`, `SENTRY_DSN`), or it is a `…_KEY` that is not a sort/cache/public key, or
it holds a strong word anywhere and does not end in a word for something else
(`SECRET_KEY_BASE` is secret, `TOKEN_URL`, `PASSWORD_FILE` and `max_tokens` are not).
A value is secret by its shape (caretz/secret_shapes.py: provider prefixes, URLs with
credentials, JWTs, key blocks, passwords on command lines, base64 that decodes to one of
these), or because detect-secrets finds it (caretz/secret_detector.py: its vendor
plugins, its keyword plugin, and its entropy measure, which finds the random tokens no
table names). The table runs first and alone costs a few ms; detect-secrets is imported
when a text is judged, and for an environment variable only when a word of its value
could be a token (`may_hold_token`), so an ordinary environment never loads it.
Measured on tests/secret_cases.py and tests/secret_corpus.py by benchmarks/secrets.py.
A leaf: it imports nothing from caretz but the two modules beside it.
"""

from __future__ import annotations

import codecs
import functools
import re

from caretz.secret_shapes import shapes

REDACTED = "[redacted]"
REDACTED_WORD = "redacted"  # what a detector may find of a value the table already replaced

# -- names -------------------------------------------------------------------------------

# A name whose last word is one of these holds a secret.
SECRET_WORDS = frozenset(
    {"secret", "secrets", "password", "passwd", "passphrase", "pass", "pwd", "token",
     "credential", "credentials", "apikey", "dsn", "privatekey", "accesskey", "authkey",
     "passcode", "pin", "accesstoken", "authtoken", "mnemonic", "cookie", "cookies"}
)  # fmt: skip
# ...or which holds one of these anywhere (SECRET_KEY_BASE), unless it ends in NOT_SECRET_ENDS.
STRONG_WORDS = frozenset(
    {"secret", "password", "passwd", "passphrase", "token", "credential", "credentials", "apikey"}
)
# A single-word name that ends with one of these (PGPASSWORD, BEARERTOKEN).
_JOINED_ENDINGS = ("password", "passwd", "passphrase", "secret", "token", "apikey")
# `…_KEY` names are secret unless the word before says what other kind of key it is.
NOT_SECRET_KEYS = frozenset(
    {"public", "primary", "sort", "cache", "foreign", "partition", "hash", "idempotency",
     "lookup", "dict", "map", "row", "object", "unique", "composite", "routing", "shard",
     "group", "index", "translation", "i18n", "message", "shortcut", "hot", "pub", "dedup",
     "order", "range", "join", "storage", "registry", "field", "column", "s3"}
)  # fmt: skip
# Last words that name something about a secret rather than the secret itself.
NOT_SECRET_ENDS = frozenset(
    {"url", "uri", "urls", "endpoint", "host", "hostname", "port", "file", "files", "path",
     "paths", "dir", "directory", "name", "names", "type", "types", "id", "ids", "expiry",
     "expires", "expiration", "ttl", "length", "len", "count", "size", "limit", "max", "min",
     "format", "header", "prefix", "suffix", "field", "enabled", "disabled", "required",
     "rotation", "version", "timeout", "mode", "policy", "algorithm", "alg", "scope", "scopes",
     "provider", "method", "kind", "style", "hint", "label", "placeholder", "template",
     "regex", "pattern", "validator", "store", "manager", "reset", "parallelism", "env",
     "var", "source", "location", "command", "cmd", "helper", "rule", "rules", "status",
     "strength", "reminder", "changed", "set", "missing", "error", "errors", "days", "hours",
     "minutes", "seconds", "age", "attempts", "retries", "interval", "settings", "config",
     "options", "callable", "class", "handler", "backend", "factory", "service"}
)  # fmt: skip
# Names that end like something else but are secrets (GCP's private_key_id, AWS's key id).
SECRET_ENDINGS = (("private", "key", "id"), ("access", "key", "id"))
# CI and CLI variables that hold a token under a name no word above gives away: Azure
# Pipelines, ngrok, Bitwarden and 1Password sessions, GitLab's job JWTs, CircleCI's OIDC
# tokens (a `*` stands for any text: OP_SESSION_my_team).
SECRET_VARIABLES = (
    "SYSTEM_ACCESSTOKEN", "NGROK_AUTHTOKEN", "BW_SESSION", "OP_SESSION_*", "CI_JOB_JWT*",
    "CI_JOB_TOKEN", "CIRCLE_OIDC_TOKEN*", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_*",
    "BUILDKITE_AGENT_ACCESS_TOKEN", "BUILDKITE_AGENT_TOKEN", "TF_TOKEN_*", "VAULT_TOKEN",
    "HEROKU_API_KEY", "DOCKER_AUTH_CONFIG", "NPM_CONFIG__AUTH*", "*_OIDC_TOKEN*", "KUBE_TOKEN",
    "GITHUB_PAT", "GH_PAT", "GITLAB_PAT", "AZURE_DEVOPS_EXT_PAT", "ADO_PAT", "ARM_CLIENT_SECRET", "ARM_ACCESS_KEY",
    "CLOUDSDK_AUTH_ACCESS_TOKEN", "GOOGLE_OAUTH_ACCESS_TOKEN", "GOOGLE_CREDENTIALS",
    "GOOGLE_APPLICATION_CREDENTIALS", "DIGITALOCEAN_ACCESS_TOKEN", "LINODE_TOKEN",
    "CLOUDFLARE_API_TOKEN", "FLY_API_TOKEN", "NETLIFY_AUTH_TOKEN", "VERCEL_TOKEN",
    "SNYK_TOKEN", "SONAR_TOKEN", "CODECOV_TOKEN", "TWINE_PASSWORD", "CARGO_REGISTRY_TOKEN",
    "AUTHORIZATION", "*_AUTHORIZATION", "COOKIE", "*_COOKIE",
)  # fmt: skip
# The shell's own variables whose names only look like secrets.
SHELL_VARIABLES = frozenset({"PWD", "OLDPWD"})


@functools.cache
def _secret_variable() -> re.Pattern[str]:
    # Compiled when first needed: most runs never check a name (nor a shape, below).
    names = (re.escape(name).replace(r"\*", ".*") for name in SECRET_VARIABLES)
    return re.compile("|".join(names), re.IGNORECASE)


_WORD_PIECES = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def name_words(name: str) -> list[str]:
    """`DJANGO_SECRET_KEY` → django, secret, key; `apiKey` → api, key."""
    return [piece.lower() for piece in _WORD_PIECES.findall(name)]


def is_secret_name(name: str) -> bool:
    """Whether a variable or key of this name holds a secret (see the module docstring)."""
    if _secret_variable().fullmatch(name):
        return True
    if name in SHELL_VARIABLES:
        return False
    words = name_words(name)
    if not words:
        return False
    last = words[-1]
    if words == ["pass"]:
        return False  # `PASS: test_x`: a test's verdict
    if tuple(words[-3:]) in SECRET_ENDINGS or last in SECRET_WORDS:
        return True
    if last == "key":
        return len(words) > 1 and words[-2] not in NOT_SECRET_KEYS
    if len(words) == 1 and last.endswith(_JOINED_ENDINGS):
        return True
    if last in NOT_SECRET_ENDS:
        return False
    return any(word in STRONG_WORDS for word in words)


# -- names followed by values --------------------------------------------------------------

_AUTHORIZATION = re.compile(r"(?i)(authorization[ \t]*[:=][ \t]*\"?)[^\n\"']+")
_BEARER = re.compile(r"(?i)(\b(?:bearer|token)\s+)[A-Za-z0-9._~+/=\-]{16,}")
# NAME=value, NAME: value, "name": "value", name = 'value'; not ==, :: or :=.
_ASSIGNMENT = re.compile(
    r"(?<![A-Za-z0-9_.\-/])([A-Za-z_][A-Za-z0-9_.\-]*)([\"']?[ \t]*(?<![=!<>:])([:=])(?![=:])[ \t]*)"
)
_QUOTED_VALUE = re.compile(r"\"[^\"\n]*\"|'[^'\n]*'")
_EQUALS_VALUE = re.compile(r"[^\s\"',;})\]]+")
_COLON_VALUE = re.compile(r"[^\n,}\"']*[^\s,}\"']")
_CODE_PREFIXES = ("$", "<", "{", "[", "(", "%", "self.", "cls.", "this.", "os.", "process.",
                  "settings.", "config.", "env.", "ENV[")  # fmt: skip
_NOT_VALUES = frozenset(
    {"none", "null", "nil", "true", "false", "undefined", "''", '""', "str", "string", "int",
     "bytes", "bool", "float", "any", "object"}
)  # fmt: skip
_PLACEHOLDER = re.compile(r"[A-Z]+(?:_[A-Z]+)+|<[^>]*>|[xX]{4,}|\*{3,}")
# `__params_old_key__`, `user_session`: an identifier, not a key.
_IDENTIFIER = re.compile(r"[a-z_][a-z_.\-]*")
# define('DB_PASSWORD', '…') (PHP) and <password>…</password> (XML): a name, then its value.
_ELEMENTS = (
    (
        re.compile(r"\bdefine\(\s*(['\"])([A-Za-z_][A-Za-z0-9_]*)\1\s*,\s*(['\"])([^'\"\n]+)\3"),
        2,
        4,
        "define(",
    ),
    (re.compile(r"<([A-Za-z_][A-Za-z0-9_.\-]*)>([^<\n]+)</\1>"), 1, 2, "</"),
)
# A command (up to a pipe, a list operator or a line's end), a user named in it, a password.
_SEGMENT = re.compile(r"[^\n|;&]+")
_USER_OPTION = re.compile(r"\s(?:-u|--?user(?:name)?)(?:[ \t]+|=)['\"]?[^\s'\"$-]")
_PASSWORD_OPTION = re.compile(
    r"\s-(?:p|P|-?pass|-?pw)(?:[ \t]+|=)(?!['\"]?[$-])(['\"]?[^\s'\"]+['\"]?)"
)
# mysql's `-p` asks for the password (its value is attached: the table reads `-phunter2`).
_PROMPTING = re.compile(r"\s*(?:\S*/)?(?:mysql[a-z]*|mariadb[a-z-]*)\s")
# What a `-p` may be besides a password: a port, a port mapping, a version.
_NOT_PASSWORD = re.compile(r"(?:[0-9.]+:)?[0-9.]+(?::[0-9]+)?(?:/(?:tcp|udp))?")
_LINE_NUMBER = re.compile(r"[0-9]+(?:[:)\]]|$)")
_TOKEN_WORD = re.compile(r"[A-Za-z0-9_\-+/=.~]{20,}")
_MIXED = re.compile(r"(?=.*[A-Z])(?=.*[a-z])(?=.*[0-9])")
_BASE64_WORD = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{24,}={0,2}(?![A-Za-z0-9+/=])")
_TYPE_NAME = re.compile(r"(?:[A-Z][a-z]+){2,}")
_CODE_REFERENCE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


def redact(text: str) -> str:
    """`text` with API keys, tokens, passwords and credentials replaced by [redacted]: the
    table's shapes first, then what detect-secrets finds in what the table left."""
    lines = redact_shapes(text).split("\n")
    for index, line in enumerate(lines):
        found = detected(
            line
        )  # each line on its own: a keyword's value is redacted where it stands
        if found:
            lines[index] = _replace_found(line, found)
    return "\n".join(lines)


def holds_secret(name: str, value: str) -> bool:
    """Whether an environment variable is a secret by its name, its value's shape, or what
    detect-secrets finds in the value (asked only when a word of it could be a token)."""
    if is_secret_name(name):
        return True
    if not value or redact_shapes(value) != value:
        return bool(value)
    return may_hold_token(value) and bool(detected(value))


def redact_shapes(text: str) -> str:
    """`text` with what the table recognises replaced by [redacted] (no detector)."""
    lowered = text.lower()
    text = _replace_spans(text, _named_spans(text) + _command_line_spans(text))
    for shape in shapes():
        # Gates use the text before the named pass: redacting only removes text.
        if any(needed in lowered for needed in shape.needs):
            text = shape.pattern.sub(functools.partial(_redacted, keep=shape.keep), text)
    return _redact_encoded(text)


def detected(text: str) -> list[str]:
    """The secrets detect-secrets finds in `text`, less what only looks like a value."""
    # detect-secrets costs a few hundred ms to import: loaded when a text is judged, never
    # on a run's way to its first request (tests/test_import_budget.py).
    from caretz import secret_detector

    found = secret_detector.findings(text)
    return [value for value in found if REDACTED_WORD not in value and _plausible(value)]


def may_hold_token(value: str) -> bool:
    """Whether a word of `value` could be a token the table does not know: 20 characters or
    more of a token's alphabet, with capitals, small letters and digits (not a path, not a
    hash, not a word). detect-secrets is asked about such values only."""
    return any(
        not word.startswith("/") and _MIXED.search(word) is not None
        for word in _TOKEN_WORD.findall(value)
    )


def _named_spans(text: str) -> list[tuple[int, int]]:
    spans = [(m.end(1), m.end()) for m in _AUTHORIZATION.finditer(text)]
    spans += [(m.end(1), m.end()) for m in _BEARER.finditer(text)]
    for match in _ASSIGNMENT.finditer(text):
        name = match.group(1)
        if not is_secret_name(name):
            continue
        value = _value_at(text, match.end(), colon=match.group(3) == ":")
        found = text[value[0] : value[1]] if value is not None else ""
        if value is not None and _looks_secret(name, found) and not _line_number(name, found):
            spans.append(value)
    for pattern, name_group, value_group, needs in _ELEMENTS:
        if needs not in text:
            continue
        for match in pattern.finditer(text):
            name, written = match.group(name_group), match.group(value_group)
            if is_secret_name(name) and _looks_secret(name, written):
                spans.append(match.span(value_group))
    return spans


def _redacted(match: re.Match[str], keep: int) -> str:
    """A shape's match as redacted: the group it keeps (a key's name), then [redacted]."""
    return (match.group(keep) if keep else "") + REDACTED


def _command_line_spans(text: str) -> list[tuple[int, int]]:
    """`-p VALUE` in a command that also names a user (`cqlsh -u cassandra -p …`,
    `ncftpput -u ann -p …`): a password, unless it is a port (digits only)."""
    spans: list[tuple[int, int]] = []
    done = 0
    for user in _USER_OPTION.finditer(text):
        if user.start() < done:
            continue
        start = max(text.rfind(mark, 0, user.start()) for mark in "\n|;&") + 1
        segment = _SEGMENT.match(text, start)
        assert segment is not None
        done = segment.end()
        if _PROMPTING.match(segment.group()) is not None:
            continue
        for match in _PASSWORD_OPTION.finditer(text, segment.start(), segment.end()):
            if not _NOT_PASSWORD.fullmatch(match.group(1).strip("'\"")):
                spans.append(match.span(1))
    return spans


def _redact_encoded(text: str) -> str:
    """A base64 word whose decoded text holds a secret (a kubeconfig, `user:password`)."""
    if len(text) < 24:
        return text

    def replace(match: re.Match[str]) -> str:
        try:
            # The codec registry loads base64's codec at the first call, not on a run's path.
            decoded = codecs.decode(match.group().encode("ascii"), "base64").decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return match.group()
        if not decoded.isprintable() and not decoded.replace("\n", "").isprintable():
            return match.group()
        return REDACTED if redact_shapes(decoded) != decoded else match.group()

    return _BASE64_WORD.sub(replace, text)


def _line_number(name: str, value: str) -> bool:
    """`TokenService.java:88`: a file and a line, not a name and its value."""
    return "." in name and _LINE_NUMBER.match(value) is not None


def _plausible(value: str) -> bool:
    """Whether a detector's finding is a value rather than code or a word about one."""
    inner = value.strip("\"'`")
    if len(inner) < 4 or inner.lower().rstrip(":;,") in _NOT_VALUES or inner.endswith(":"):
        return False
    if any(char in inner for char in "([") or _CODE_REFERENCE.fullmatch(inner):
        return False
    if _TYPE_NAME.fullmatch(inner.rstrip(",;")):
        return False  # `file_secret_settings: SettingsSourceCallable,`: a type
    return not inner.startswith(_CODE_PREFIXES)


def _replace_found(text: str, values: list[str]) -> str:
    """Every place in `text` a found value stands as a whole word, replaced."""
    for value in sorted(values, key=len, reverse=True):
        pattern = rf"(?<![A-Za-z0-9]){re.escape(value)}(?![A-Za-z0-9])"
        text = re.sub(pattern, REDACTED, text)
    return text


def _value_at(text: str, start: int, colon: bool) -> tuple[int, int] | None:
    for pattern in (_QUOTED_VALUE, _COLON_VALUE if colon else _EQUALS_VALUE):
        match = pattern.match(text, start)
        if match is not None and match.end() > start:
            return match.start(), match.end()
    return None


def _looks_secret(name: str, value: str) -> bool:
    inner = value.strip("\"'").strip()
    if len(inner) < 3 or inner.lower() in _NOT_VALUES or inner.startswith(_CODE_PREFIXES):
        return False
    own = name.rsplit(".", 1)[-1].lower()  # `self.token = token`: the variable, passed on
    if "(" in inner or "[" in inner or inner.lower() in (own, name_words(name)[-1]):
        return False
    if _PLACEHOLDER.fullmatch(inner):
        return False  # `YOUR_ACCESS_TOKEN`, `CHANGE_ME`
    if len(inner.split()) > 5:
        return False  # `:param access_token: The token that provides access to …`: prose
    if inner.isascii() and inner.isdigit() and name_words(name)[-1] not in SECRET_WORDS:
        return False  # `PASSWORD_RESET_DAYS = 3`: a number about a secret
    if name_words(name)[-1] == "key":  # weaker evidence: `cache_key='user:42'` is not a key
        spaced = any(char.isspace() for char in inner)
        return len(inner) >= 8 and not spaced and _IDENTIFIER.fullmatch(inner) is None
    return True


def _replace_spans(text: str, spans: list[tuple[int, int]]) -> str:
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
