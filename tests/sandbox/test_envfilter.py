"""The environment a command gets: no API keys, no secrets, and the user's chosen names."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from caretz.sandbox.envfilter import EnvFilter, is_secret_name
from tests import secret_corpus
from tests.sandbox.helpers import run_in

SECRETS = {
    "ANTHROPIC_API_KEY": "sk-ant-1",
    "ANTHROPIC_AUTH_TOKEN": "t",
    "OPENAI_API_KEY": "sk-2",
    "CARETZ_API_KEY": "k",
    "GITHUB_TOKEN": "ghp_x",
    "GH_TOKEN": "ghp_y",
    "AWS_ACCESS_KEY_ID": "AKIA",
    "AWS_SECRET_ACCESS_KEY": "s",
    "AWS_SESSION_TOKEN": "s",
    "DJANGO_SECRET_KEY": "d",
    "SECRET_KEY_BASE": "r",
    "DB_PASS": "hunter2",
    "DB_PASSWORD": "hunter2",
    "PGPASSWORD": "p",
    "MYSQL_PWD": "p",
    "STRIPE_KEY": "sk_live_x",
    "SENTRY_DSN": "https://k@sentry.io/1",
    "SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/x",
    "AZURE_STORAGE_CONNECTION_STRING": "AccountKey=x",
    "GOOGLE_APPLICATION_CREDENTIALS": "/keys/sa.json",
    "GPG_PASSPHRASE": "p",
    "npm_config__auth": "x",
    "DATABASE_URL": "postgres://app:hunter2@db/app",
}
KEPT = {
    "PATH": "/usr/bin",
    "HOME": "/home/u",
    "PWD": "/w",
    "OLDPWD": "/",
    "TERM": "xterm",
    "LANG": "C.UTF-8",
    "SSH_AUTH_SOCK": "/run/user/1/agent",
    "KUBECONFIG": "/home/u/.kube/config",
    "MAX_TOKENS_HINT": "4096",
    "PUBLIC_URL": "https://example.com/app",
    "REDIS_URL": "redis://db:6379/0",
    "XAUTHORITY": "/run/user/1/xauth",
}


def test_secrets_are_dropped_and_the_rest_kept():
    env = EnvFilter().apply({**SECRETS, **KEPT})
    assert env == KEPT


def test_the_corpus_secrets_are_dropped_and_its_ordinary_variables_kept():
    ordinary = dict(secret_corpus.ENV_ORDINARY)
    env = EnvFilter().apply({**dict(secret_corpus.ENV_SECRETS), **ordinary})
    assert env == ordinary


_DETECTOR_LOADED = """
import json, sys
from caretz.sandbox.envfilter import EnvFilter
kept = EnvFilter().apply(json.loads(sys.stdin.read()))
print(json.dumps([sorted(kept), "detect_secrets" in sys.modules]))
"""


@pytest.mark.parametrize("with_token", [False, True])
def test_the_detector_is_loaded_only_for_a_value_the_table_cannot_settle(with_token):
    """An environment of paths, words and hashes is filtered by the table alone; a value
    holding a random word (a session cookie under a name that says nothing) brings in
    detect-secrets, which drops it."""
    env = dict(secret_corpus.ENV_ORDINARY)
    if with_token:
        env["FASTLANE_SESSION"] = dict(secret_corpus.ENV_SECRETS)["FASTLANE_SESSION"]
    found = subprocess.run(
        [sys.executable, "-c", _DETECTOR_LOADED],
        input=json.dumps(env),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert json.loads(found) == [sorted(dict(secret_corpus.ENV_ORDINARY)), with_token]


def test_dropped_lists_names_only():
    dropped = EnvFilter().dropped({**SECRETS, **KEPT})
    assert dropped == sorted(SECRETS)
    assert "hunter2" not in " ".join(dropped)


def test_provider_key_variables_are_dropped_whatever_their_names():
    env = EnvFilter.create(secret_names=["MY_LLM_CRED"]).apply({"MY_LLM_CRED": "x", "A": "1"})
    assert env == {"A": "1"}


def test_shell_env_passes_chosen_names():
    env = EnvFilter.create(allow=["GITHUB_TOKEN"]).apply({"GITHUB_TOKEN": "g", "GH_TOKEN": "h"})
    assert env == {"GITHUB_TOKEN": "g"}


@pytest.mark.parametrize("name", ["anthropic_api_key", "Github_Token", "my_secret"])
def test_names_match_without_regard_to_case(name):
    assert is_secret_name(name)


@pytest.mark.parametrize("backend", ["bwrap", "landlock"])
def test_a_command_cannot_print_the_api_key(backend, make_policy, request):
    sandbox = request.getfixturevalue(f"{backend}_sandbox")(make_policy())
    result = run_in(
        sandbox,
        'echo "key=[$ANTHROPIC_API_KEY] db=[$DATABASE_URL] path=[${PATH:+set}]"; env',
        env={"ANTHROPIC_API_KEY": "sk-ant-live-secret", "DATABASE_URL": "mysql://u:pw@h/d"},
    )
    assert result.stdout.splitlines()[0] == "key=[] db=[] path=[set]"
    assert "sk-ant-live-secret" not in result.stdout and "pw@h" not in result.stdout


# The classes a CI runner or a developer's shell holds: each is dropped by its name or by
# its value's shape (the values are made up, shaped like the real thing).
_JWT = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJwcm9qZWN0X3BhdGgifQ.c2lnbmF0dXJlX2hlcmVfMTIz"
_KEY_FILE = (
    '{"type": "service_account", "project_id": "shop", "private_key_id": "0a1b2c3d4e5f6a7b",'
    ' "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\n'
    '-----END PRIVATE KEY-----\\n"}'
)
CLASSES = {
    # values the secrets table flags under names that say nothing
    "GH_ENTERPRISE_CRED_X": "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv",
    "GL_THING": "glpat-AbCdEfGhIjKlMnOpQrSt",
    "TF_TOKEN_app_terraform_io": "abcdefghijklmn.atlasv1.opqrstuvwxyz0123456789",
    "CI_JOB_JWT": _JWT,
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "a1b2c3",
    "SA_JSON": _KEY_FILE,
    "PAYMENTS": "sk_live_51HxAbCdEfGhIjKlMnOpQrSt",
    "AUTHORIZATION": "Bearer abc.def",
    # CI and CLI token names no word gives away
    "SYSTEM_ACCESSTOKEN": "azdo-123",
    "NGROK_AUTHTOKEN": "2abc_def",
    "BW_SESSION": "dGhpcyBpcyBhIHNlc3Npb24=",
    "OP_SESSION_my_team": "op-session-value",
    "CI_JOB_TOKEN": "job-token",
    "BUILDKITE_AGENT_ACCESS_TOKEN": "bk",
    "CIRCLE_OIDC_TOKEN_V2": _JWT,
    # URLs with credentials, a password holding a slash included
    "MONGO_URL": "mongodb://u:p/ss@host:27017/db",
    "AMQP": "amqp://guest:guest@rabbit:5672/",
}
KEPT_TOO = {
    "DESKTOP_SESSION": "ubuntu",
    "XDG_SESSION_TYPE": "wayland",
    "GITHUB_SHA": "3f2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a",
    "CI_JOB_URL": "https://gitlab.com/a/b/-/jobs/1",
    "INVOCATION_ID": "0123456789abcdef0123456789abcdef",
    "GIT_ASKPASS": "/usr/lib/git-core/git-gui--askpass",
    "HOSTNAME": "task-runner-abcdefghijklmnop",
}


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_each_class_of_secret_is_dropped(name):
    assert not EnvFilter().keeps(name, CLASSES[name])


def test_ordinary_ci_and_desktop_variables_are_kept():
    assert EnvFilter().apply({**CLASSES, **KEPT_TOO, **KEPT}) == {**KEPT_TOO, **KEPT}


def test_shell_env_passes_a_variable_the_table_would_drop():
    env = EnvFilter.create(allow=["BW_SESSION"]).apply(CLASSES)
    assert env == {"BW_SESSION": CLASSES["BW_SESSION"]}


def test_commands_get_a_plain_terminal_unless_shell_env_names_it():
    host = {"TERM": "xterm-256color", "FORCE_COLOR": "1", "CLICOLOR_FORCE": "1", "A": "1"}
    assert EnvFilter().for_command(host) == {"TERM": "dumb", "NO_COLOR": "1", "A": "1"}
    chosen = EnvFilter.create(allow=["TERM", "FORCE_COLOR"]).for_command(host)
    assert chosen == {"TERM": "xterm-256color", "FORCE_COLOR": "1", "NO_COLOR": "1", "A": "1"}


@pytest.mark.parametrize("backend", ["bwrap", "landlock"])
def test_no_class_reaches_a_sandboxed_env(backend, make_policy, request):
    sandbox = request.getfixturevalue(f"{backend}_sandbox")(make_policy())
    result = run_in(sandbox, "env; echo TERM=[$TERM]", env={**CLASSES, **KEPT_TOO})
    for name, value in CLASSES.items():
        assert f"{name}=" not in result.stdout and value not in result.stdout, name
    assert "DESKTOP_SESSION=ubuntu" in result.stdout and "TERM=[dumb]" in result.stdout


def test_an_mcp_server_gets_no_secret_from_its_base_names_but_what_its_entry_gives():
    from caretz.mcp_client.launch import server_environment

    caretz_env = {"PATH": "/usr/bin", "TERM": "Bearer abcdefghijklmnop0123", "GITHUB_TOKEN": "g"}
    env = server_environment(caretz_env, {"GITHUB_TOKEN": "given on purpose"})
    assert env == {"PATH": "/usr/bin", "GITHUB_TOKEN": "given on purpose"}
