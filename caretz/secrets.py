"""What a secret looks like: one table, used to redact text and to tell secret variable names.

- `redact(text)`: the text with keys, tokens, passwords and credentials replaced by
  [redacted], before it leaves the machine (the loop guard's judge summary);
- `is_secret_name(name)`: whether an environment variable (or a config key) of that
  name holds a secret, so that the shell a command runs in does not inherit it;
- `holds_secret(name, value)`: either the name says so or the value has a secret's shape.

A name is secret by its words: its last word is one of SECRET_WORDS (`DB_PASS`,
`GITHUB_TOKEN`, `SENTRY_DSN`), or it is a `…_KEY` that is not a sort/cache/public key, or
it holds a strong word anywhere and does not end in a word for something else
(`SECRET_KEY_BASE` is secret, `TOKEN_URL`, `PASSWORD_FILE` and `max_tokens` are not).
A value is secret by its shape: provider prefixes, URLs with credentials, JWTs, key
blocks, `-p` passwords on database command lines. A leaf module: it imports nothing
from caretz. Checked against detect-secrets on tests/secret_cases.py: it missed 40 of
the 68 secrets there, changed 6 of the 55 look-alikes, and took 260 ms to import.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

REDACTED = "[redacted]"

# -- names -------------------------------------------------------------------------------

# A name whose last word is one of these holds a secret.
SECRET_WORDS = frozenset(
    {"secret", "secrets", "password", "passwd", "passphrase", "pass", "pwd", "token",
     "credential", "credentials", "apikey", "dsn", "privatekey", "accesskey", "authkey",
     "passcode", "pin", "accesstoken", "authtoken"}
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
     "strength", "reminder", "changed", "set", "missing", "error", "errors"}
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
    if tuple(words[-3:]) in SECRET_ENDINGS or last in SECRET_WORDS:
        return True
    if last == "key":
        return len(words) > 1 and words[-2] not in NOT_SECRET_KEYS
    if len(words) == 1 and last.endswith(_JOINED_ENDINGS):
        return True
    if last in NOT_SECRET_ENDS:
        return False
    return any(word in STRONG_WORDS for word in words)


def holds_secret(name: str, value: str) -> bool:
    """Whether an environment variable is a secret by its name or by its value's shape."""
    return is_secret_name(name) or (bool(value) and redact(value) != value)


# -- shapes ------------------------------------------------------------------------------


class Shape(NamedTuple):
    """A secret recognised by its own shape; group `keep` (if any) stays before [redacted].
    A tuple: this module is on every run's path, and most runs never compile a shape."""

    pattern: re.Pattern[str]
    needs: tuple[str, ...]  # lower-case: the pattern runs only when one of these occurs
    keep: int = 0


_WORD_START = re.compile(r"\\b([A-Za-z0-9_][A-Za-z0-9_\-]*)")


def _shape(pattern: str, *needs: str, keep: int = 0) -> Shape:
    # `\bghp_…` written as `ghp_(?<![A-Za-z0-9_]ghp_)…`: the same match, but the engine
    # finds candidates by searching for the literal instead of trying every position.
    start = _WORD_START.match(pattern)
    if start is not None:
        literal = start.group(1)
        pattern = f"{literal}(?<![A-Za-z0-9_]{literal}){pattern[start.end() :]}"
    return Shape(re.compile(pattern, re.DOTALL), needs, keep)


@functools.cache
def shapes() -> list[Shape]:
    """The shapes, compiled when first needed (about 70 patterns)."""
    return [_shape(pattern, *needs, keep=keep) for pattern, needs, keep in _SHAPE_TABLE]


def _row(pattern: str, *needs: str, keep: int = 0) -> tuple[str, tuple[str, ...], int]:
    return pattern, needs, keep


_SHAPE_TABLE = [
    _row(r"-----BEGIN [A-Z ]*PRIVATE KEY[A-Z ]*-----.*?(?:-----END [A-Z ]*PRIVATE KEY[A-Z ]*-----|\Z)",
           "private key"),
    _row(r"(://[^\s:/@]*:)[^\s@]+(?=@)", "://", keep=1),  # user:password@host (p/ss too)
    _row(r"(https?://)[0-9a-f]{32}(?::[0-9a-f]{32})?(?=@)", "://", keep=1),  # Sentry DSN
    _row(r"(hooks\.slack\.com/services/)[A-Za-z0-9/_\-]+", "hooks.slack", keep=1),
    _row(r"(discord(?:app)?\.com/api/webhooks/[0-9]+/)[A-Za-z0-9_\-]+", "webhooks", keep=1),
    _row(r"([?&]sig=)[A-Za-z0-9%+/=]{10,}", "sig=", keep=1),  # Azure SAS
    _row(r"\bsk-ant-[A-Za-z0-9_\-]{8,}", "sk-ant-"),
    # Not inside a word: `task-runner-abcdefghijklmnop` is no key.
    _row(r"(?<![A-Za-z0-9_\-])sk-(?:proj-|svcacct-|admin-|live_|test_)?[A-Za-z0-9_\-]{16,}",
           "sk-"),
    _row(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}", "k_live_", "k_test_"),
    _row(r"\bwhsec_[A-Za-z0-9]{16,}", "whsec_"),
    _row(r"\bgh[pousr]_[A-Za-z0-9]{16,}", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    _row(r"github_pat_[A-Za-z0-9_]{20,}", "github_pat_"),
    _row(r"\bgl(?:pat|dt|rt|ptt|soat|cbt|imt|ft|ffct|agent|oas|wt)-[A-Za-z0-9_\-]{16,}", "gl"),
    _row(r"\bxox[abprse]-[A-Za-z0-9\-]{10,}", "xox"),
    _row(r"\bxapp-[0-9]-[A-Za-z0-9\-]{16,}", "xapp-"),
    # An AWS credentials CSV (`AKIA…,<secret>`): the secret half goes with the key id.
    _row(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}[ \t]*[,;\t:|][ \t]*[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])",
           "akia", "asia"),
    _row(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", "akia", "asia"),
    _row(r"\bya29\.[0-9A-Za-z_\-]{20,}", "ya29."),  # Google OAuth access token
    _row(r"AIza[0-9A-Za-z_\-]{35}", "aiza"),
    _row(r"\bhf_[A-Za-z0-9]{30,}", "hf_"),
    _row(r"\bnpm_[A-Za-z0-9]{36}", "npm_"),
    _row(r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}", "sg."),
    _row(r"\bSK[0-9a-fA-F]{32}\b", "sk"),  # Twilio
    _row(r"\bkey-[0-9a-zA-Z]{32}\b", "key-"),  # Mailgun
    _row(r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", "shp"),
    _row(r"\bpypi-AgE[A-Za-z0-9_\-]{40,}", "pypi-"),
    _row(r"\bdo[opr]_v1_[a-f0-9]{64}", "_v1_"),
    _row(r"\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}", "glsa_"),  # Grafana
    _row(r"\bdckr_pat_[A-Za-z0-9_\-]{20,}", "dckr_pat_"),
    _row(r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}", "hvs.", "hvb.", "hvr."),  # Vault
    _row(r"\blin_api_[A-Za-z0-9]{32,}", "lin_api_"),
    _row(r"\bATATT[A-Za-z0-9_\-=]{20,}", "atatt"),  # Atlassian
    _row(r"\bfigd_[A-Za-z0-9_\-]{30,}", "figd_"),
    _row(r"\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-.]{30,}", "pscale_"),
    _row(r"\bsntr[ysu]s?_[A-Za-z0-9_\-=+/]{30,}", "sntr"),  # Sentry auth tokens
    _row(r"\bAGE-SECRET-KEY-1[0-9A-Z]{50,}", "age-secret-key-"),
    _row(r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{40,}", "atlasv1"),  # Terraform
    _row(r"\bdp\.(?:st|pt|sa|ct|scim|audit)\.[A-Za-z0-9_\-.]{30,}", "dp."),  # Doppler
    _row(r"\bsq0(?:atp|csp)-[A-Za-z0-9_\-]{22,}", "sq0"),  # Square
    _row(r"\brubygems_[a-f0-9]{48}", "rubygems_"),
    _row(r"\bpul-[a-f0-9]{40}", "pul-"),  # Pulumi
    _row(r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}", "pmak-"),  # Postman
    _row(r"\btskey-[A-Za-z0-9\-]{20,}", "tskey-"),  # Tailscale
    _row(r"\b(?:gsk|xai|pplx|nvapi)[_\-][A-Za-z0-9_\-]{32,}", "gsk_", "xai-", "pplx-",
           "nvapi-"),  # Groq, xAI, Perplexity, NVIDIA
    _row(r"\blsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}", "lsv2_"),  # LangSmith
    _row(r"\bFlyV1 fm[12]_[A-Za-z0-9_\-+/=,]{20,}", "flyv1"),
    _row(r"(\b[0-9]{8,10}:)AA[A-Za-z0-9_\-]{30,}", ":aa", keep=1),  # Telegram bot
    _row(r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", "eyj"),
    # Passwords given on a command line.
    _row(r"(\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mariadb)\b[^\n|;&]*?\s-p)(?=[^\s-])\S+",
           "mysql", "mariadb", keep=1),
    _row(r"(\b(?:sshpass|login)\b[^\n|;&]*?\s-p\s*)['\"]?[^\s'\"$]+['\"]?", "sshpass", "login",
           keep=1),
    _row(r"(\bhtpasswd\b(?:\s+-[a-zA-Z]+)*\s+-[a-zA-Z]*b[a-zA-Z]*(?:\s+-[a-zA-Z]+)*"
           r"(?:\s+(?!-)\S+){1,2}?\s+(?!-)(?:\S+\s+)?)['\"]?[^\s'\"$]+['\"]?(?=\s*(?:$|[\n|;&]))",
           "htpasswd", keep=1),
    _row(r"(\bredis-cli\b[^\n|;&]*?\s(?:-a|--pass)\s+)['\"]?[^\s'\"$]+['\"]?", "redis-cli",
           keep=1),
    _row(r"(\bmongo(?:sh|dump|restore|export|import|stat|top)?\b[^\n|;&]*?\s-p\s*)"
           r"['\"]?[^\s'\"$-][^\s'\"]*['\"]?", "mongo", keep=1),
    _row(r"(\bldap[a-z]+\b[^\n|;&]*?\s-w\s*)['\"]?[^\s'\"$]+['\"]?", "ldap", keep=1),
    _row(r"(\s-U\s*['\"]?[^\s%'\"]+%)[^\s'\"]+", "%", keep=1),  # smbclient -U user%pass
    _row(r"(\b(?:zip|unzip|zipcloak)\b[^\n|;&]*?\s-P\s*)['\"]?[^\s'\"$]+['\"]?", "zip", keep=1),
    _row(r"(\b(?:7z|7za|7zr|rar|unrar)\b[^\n|;&]*?\s-p)['\"]?[^\s'\"$]+['\"]?", "7z", "rar",
           keep=1),
    _row(r"(\b(?:sqlcmd|bcp|osql|isql|sqlplus)\b[^\n|;&]*?\s-P\s*)['\"]?[^\s'\"$]+['\"]?",
           "sqlcmd", "bcp", "osql", "isql", "sqlplus", keep=1),
    _row(r"(\bopenssl\b[^\n|;&]*?\s-k\s+)['\"]?[^\s'\"$]+['\"]?", "openssl", keep=1),
    _row(r"(\s-(?:storepass|keypass|srcstorepass|deststorepass|srckeypass|destkeypass)\s+)"
           r"['\"]?[^\s'\"$]+['\"]?", "pass ", keep=1),  # keytool
    _row(r"(\bssh-keygen\b[^\n|;&]*?\s-[NP]\s*)(?:'[^'\n]+'|\"[^\"\n]+\"|[^\s'\"$-]\S*)",
           "ssh-keygen", keep=1),
    _row(r"(\bmachine\s+\S+\s+(?:login\s+\S+\s+)?password\s+)\S+", "machine", keep=1),  # .netrc
    _row(r"(\bcurl\b[^\n|;&]*?\s(?:-u|--user)[ =]?['\"]?[^\s:'\"]+:)[^\s'\"]+", "curl", keep=1),
    # --password=…, --http-password …, --db-passwd, --passphrase, --auth-token; not a
    # --password-file or --token-stdin, and not a `$VAR` the shell fills in.
    _row(r"(--(?:[a-z]+-)*(?:password|passwd|passphrase|pass|token|api-key|apikey|secret|"
           r"client-secret|private-key)[ =])(?!['\"]?\$)['\"]?[^\s'\"]+['\"]?",
           "pass", "--", keep=1),
    # A kubeconfig's client key, a docker config's `"auth": "<base64 user:password>"`.
    _row(r"(\bclient-key-data:[ \t]*['\"]?)[A-Za-z0-9+/=]{16,}", "client-key-data", keep=1),
    _row(r"(\"auth\"[ \t]*:[ \t]*\")(?=[A-Za-z0-9+/=]*[0-9A-Z+/=])[A-Za-z0-9+/]{12,}={0,2}(?=\")",
           '"auth"', keep=1),
]  # fmt: skip

# -- names followed by values --------------------------------------------------------------

_AUTHORIZATION = re.compile(r"(?i)(authorization[ \t]*[:=][ \t]*\"?)[^\n\"']+")
_BEARER = re.compile(r"(?i)(\b(?:bearer|token)\s+)[A-Za-z0-9._~+/=\-]{16,}")
# NAME=value, NAME: value, "name": "value", name = 'value'; not ==, :: or :=.
_ASSIGNMENT = re.compile(
    r"(?<![A-Za-z0-9_.\-])([A-Za-z_][A-Za-z0-9_.\-]*)([\"']?[ \t]*(?<![=!<>:])([:=])(?![=:])[ \t]*)"
)
_QUOTED_VALUE = re.compile(r"\"[^\"\n]*\"|'[^'\n]*'")
_EQUALS_VALUE = re.compile(r"[^\s\"',;}]+")
_COLON_VALUE = re.compile(r"[^\n,}\"']*[^\s,}\"']")
_CODE_PREFIXES = ("$", "<", "{", "[", "(", "%", "self.", "cls.", "this.", "os.", "process.",
                  "settings.", "config.", "env.", "ENV[")  # fmt: skip
_NOT_VALUES = frozenset({"none", "null", "nil", "true", "false", "undefined", "''", '""'})


def redact(text: str) -> str:
    """`text` with API keys, tokens, passwords and credentials replaced by [redacted]."""
    lowered = text.lower()
    text = _replace_spans(text, _named_spans(text))
    for shape in shapes():
        # Gates use the text before the named pass: redacting only removes text.
        if any(needed in lowered for needed in shape.needs):
            keep = shape.keep
            text = shape.pattern.sub(
                lambda m, keep=keep: (m.group(keep) if keep else "") + REDACTED, text
            )
    return text


def _named_spans(text: str) -> list[tuple[int, int]]:
    spans = [(m.end(1), m.end()) for m in _AUTHORIZATION.finditer(text)]
    spans += [(m.end(1), m.end()) for m in _BEARER.finditer(text)]
    for match in _ASSIGNMENT.finditer(text):
        name = match.group(1)
        if not is_secret_name(name):
            continue
        value = _value_at(text, match.end(), colon=match.group(3) == ":")
        if value is not None and _looks_secret(name, text[value[0] : value[1]]):
            spans.append(value)
    return spans


def _value_at(text: str, start: int, colon: bool) -> tuple[int, int] | None:
    for pattern in (_QUOTED_VALUE, _COLON_VALUE if colon else _EQUALS_VALUE):
        match = pattern.match(text, start)
        if match is not None and match.end() > start:
            return match.start(), match.end()
    return None


def _looks_secret(name: str, value: str) -> bool:
    inner = value.strip("\"'").strip()
    if not inner or inner.lower() in _NOT_VALUES or inner.startswith(_CODE_PREFIXES):
        return False
    if "(" in inner or inner.lower() in (name.lower(), name_words(name)[-1]):
        return False
    if name_words(name)[-1] == "key":  # weaker evidence: `cache_key='user:42'` is not a key
        return len(inner) >= 8 and not any(char.isspace() for char in inner)
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
