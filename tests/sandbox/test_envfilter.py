"""The environment a command gets: no API keys, no secrets, and the user's chosen names."""

from __future__ import annotations

import pytest

from caretz.sandbox.envfilter import EnvFilter, is_secret_name
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
