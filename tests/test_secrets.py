"""Secret shapes: every listed secret is redacted, every look-alike is left exactly as it was.

Two sets: the table's own cases (tests/secret_cases.py) and a corpus written apart from it
(tests/secret_corpus.py), with tokens of vendors no table row names, which only the
detector beside the table (detect-secrets) finds.
"""

from __future__ import annotations

import pytest

from caretz.secrets import REDACTED, holds_secret, is_secret_name, redact, redact_shapes
from tests import secret_corpus as corpus
from tests.secret_cases import LOOKALIKES, SECRETS


def test_the_tables_are_as_large_as_promised():
    assert len(SECRETS) >= 40 and len(LOOKALIKES) >= 40


@pytest.mark.parametrize(("text", "secret"), SECRETS)
def test_each_secret_shape_is_redacted(text: str, secret: str):
    redacted = redact(text)
    assert secret not in redacted
    assert REDACTED in redacted


@pytest.mark.parametrize("text", LOOKALIKES)
def test_each_look_alike_is_left_alone(text: str):
    assert redact(text) == text


# The judge summary's own cases (tests/guard/test_summary.py), kept true.
SUMMARY_SECRETS = [
    "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz012345",
    "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx",
    "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv",
    "AKIAIOSFODNN7EXAMPLE",
    "xoxb-123456789012-abcdefghijkl",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
]


@pytest.mark.parametrize("secret", SUMMARY_SECRETS)
def test_planted_keys_are_redacted_wherever_they_stand(secret: str):
    text = (
        f"use the key {secret} to call the API\n"
        f"Bash curl -H 'x-api-key: {secret}' https://api.example.com\n"
        f"The key is {secret}."
    )
    redacted = redact(text)
    assert secret not in redacted
    assert secret[:12] not in redacted
    assert REDACTED in redacted


@pytest.mark.parametrize(
    ("line", "kept"),
    [
        ("export GITHUB_TOKEN=abc123plain", "export GITHUB_TOKEN="),
        ("DB_PASSWORD: hunter2", "DB_PASSWORD: "),
        ('api_key="pa55word!"', "api_key="),
        ('{"apiKey": "s3cr3t-value"}', '{"apiKey": '),
        ("Authorization: Bearer abc.def.ghi-jkl", "Authorization: "),
        ("curl -H 'Authorization: token deadbeefcafe'", "Authorization: "),
        ("postgres://admin:letmein@db.internal/app", "postgres://admin:"),
    ],
)
def test_env_like_values_and_auth_headers_are_redacted(line: str, kept: str):
    redacted = redact(line)
    assert kept in redacted
    assert REDACTED in redacted
    for secret in (
        "abc123plain",
        "hunter2",
        "pa55word",
        "s3cr3t",
        "abc.def",
        "deadbeef",
        "letmein",
    ):
        assert secret not in redacted


@pytest.mark.parametrize(
    "text",
    [
        "tokenize.TokenError: ('EOF in multi-line statement', (3, 0))",
        "max_tokens=1024",
        "PasswordField(required=True)",
        "test_secret_rotation PASSED",
    ],
)
def test_redaction_leaves_ordinary_code_and_errors_alone(text: str):
    assert redact(text) == text


def test_the_name_and_what_surrounds_the_value_are_kept():
    assert redact("DJANGO_SECRET_KEY=abc123xyz789 ./manage.py") == (
        "DJANGO_SECRET_KEY=[redacted] ./manage.py"
    )
    assert redact("mysql -u root -phunter2 shop") == "mysql -u root -p[redacted] shop"
    assert redact("see https://hooks.slack.com/services/T01/B02/XyZ now") == (
        "see https://hooks.slack.com/services/[redacted] now"
    )


@pytest.mark.parametrize(
    "name",
    ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY",
     "AWS_ACCESS_KEY_ID", "AWS_SESSION_TOKEN", "DB_PASS", "MYSQL_PWD", "PGPASSWORD",
     "DJANGO_SECRET_KEY", "SECRET_KEY_BASE", "SENTRY_DSN", "HF_TOKEN", "NPM_TOKEN",
     "GOOGLE_APPLICATION_CREDENTIALS", "STRIPE_KEY", "apiKey", "client_secret",
     "AZURE_CLIENT_SECRET", "private_key_id", "SLACK_BOT_TOKEN", "CARETZ_JUDGE_API_KEY",
     "SYSTEM_ACCESSTOKEN", "NGROK_AUTHTOKEN", "BW_SESSION", "OP_SESSION_my_team", "CI_JOB_JWT_V2",
     "CI_JOB_TOKEN", "TF_TOKEN_app_terraform_io", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "GH_PAT",
     "AUTHORIZATION", "CIRCLE_OIDC_TOKEN_V2", "BUILDKITE_AGENT_ACCESS_TOKEN"],
)  # fmt: skip
def test_secret_variable_names(name: str):
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name",
    ["PATH", "HOME", "TOKEN_URL", "PASSWORD_FILE", "max_tokens", "token_count",
     "TOKENIZERS_PARALLELISM", "PUBLIC_KEY_PATH", "SSH_AUTH_SOCK", "GIT_ASKPASS", "sort_key",
     "cache_key", "KEY", "PYTHONPATH", "LANG", "TERM", "EDITOR", "password_min_length",
     "COMPASS_DIR", "BYPASS_CACHE", "KEYBOARD_LAYOUT", "PWD", "OLDPWD", "DESKTOP_SESSION",
     "XDG_SESSION_TYPE", "glob_pat", "CI_JOB_URL", "ACTIONS_CACHE_URL"],
)  # fmt: skip
def test_ordinary_variable_names(name: str):
    assert not is_secret_name(name)


def test_a_value_with_a_secret_shape_is_a_secret_whatever_its_name():
    assert holds_secret("MY_SETTING", "sk-ant-api03-AbCdEfGhIjKlMnOpQrSt")
    assert holds_secret("DATABASE_URL", "postgres://u:pw@h/db")
    assert not holds_secret("DATABASE_URL", "postgres://h/db")
    assert not holds_secret("EDITOR", "vim")


def _cases(cases, prefix):
    # The ids name the case, never its value.
    return [pytest.param(*case, id=f"{prefix}-{n}") for n, case in enumerate(cases)]


CORPUS_SECRETS = [
    *_cases(corpus.SECRETS, "corpus"),
    *_cases(corpus.HELD_OUT_SECRETS, "held-out"),
    *_cases(corpus.UNNAMED_TOKENS, "unnamed"),
]


@pytest.mark.parametrize(("text", "secret"), CORPUS_SECRETS)
def test_each_secret_of_the_corpus_is_redacted(text: str, secret: str):
    redacted = redact(text)
    assert secret not in redacted
    assert REDACTED in redacted


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(text, id=f"{prefix}-{n}")
        for prefix, texts in (
            ("corpus", corpus.LOOKALIKES),
            ("held-out", corpus.HELD_OUT_LOOKALIKES),
        )
        for n, text in enumerate(texts)
    ],
)
def test_each_look_alike_of_the_corpus_is_left_alone(text: str):
    assert redact(text) == text


def test_the_detector_finds_the_tokens_no_table_row_names():
    """The detector is what finds them: the table alone leaves most in place."""
    found_by_table = [secret not in redact_shapes(text) for text, secret in corpus.UNNAMED_TOKENS]
    found = [secret not in redact(text) for text, secret in corpus.UNNAMED_TOKENS]
    assert sum(found_by_table) <= 2 and all(found)


def test_only_the_value_the_detector_finds_is_replaced():
    token = corpus.UNNAMED_TOKENS[4][1]  # a random string passed to a client, quoted
    text = f'client = Api("{token}", retries=3)  # see docs/api.md\nclient.get("/users")'
    assert redact(text) == (
        'client = Api("[redacted]", retries=3)  # see docs/api.md\nclient.get("/users")'
    )


@pytest.mark.parametrize(("name", "value"), _cases(corpus.ENV_SECRETS, "env"))
def test_each_secret_variable_of_the_corpus_is_a_secret(name: str, value: str):
    assert holds_secret(name, value)


@pytest.mark.parametrize(("name", "value"), _cases(corpus.ENV_ORDINARY, "env"))
def test_each_ordinary_variable_of_the_corpus_is_not(name: str, value: str):
    assert not holds_secret(name, value)
