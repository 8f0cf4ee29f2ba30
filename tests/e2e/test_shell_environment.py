"""Secrets in caretz's own environment never reach a command, the model or the session log.

caretz runs with a variable of each class a CI runner or a developer's shell holds; the
model runs `env` in the sandbox. None of the values (nor the names) is in what the command
printed, in any request the model server received, or in events.jsonl; the one variable
the profile's `shellEnv` names is passed, and the command sees a plain terminal.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests import secret_corpus
from tests.e2e.conftest import Caretz
from tests.modelserver import ModelServer, text, tool

_JWT = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJwcm9qZWN0X3BhdGgifQ.c2lnbmF0dXJlX2hlcmVfMTIz"
SECRETS = {
    # values the secrets table knows, under names that say nothing
    "GH_ENTERPRISE_X": "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv",
    "GL_THING": "glpat-AbCdEfGhIjKlMnOpQrSt",
    "TF_TOKEN_app_terraform_io": "tfcloudtokenvalue.atlasv1.opqrstuvwxyz0123456789ab",
    "CI_JOB_JWT": _JWT,
    "SA_JSON": '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----'
    '\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ\\n-----END PRIVATE KEY-----\\n"}',
    "PAYMENTS": "sk_live_51HxAbCdEfGhIjKlMnOpQrSt",
    "AUTHORIZATION": "Bearer abcdefghijklmnop.qrstuvwx",
    # CI and CLI token names
    "SYSTEM_ACCESSTOKEN": "azdo-access-token-value-1",
    "NGROK_AUTHTOKEN": "ngrok-auth-token-value-2",
    "OP_SESSION_my_team": "op-session-value-3",
    "CI_JOB_TOKEN": "gitlab-job-token-value-4",
    "BUILDKITE_AGENT_ACCESS_TOKEN": "buildkite-token-value-5",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "actions-oidc-value-6",
    # a URL with credentials, the password holding a slash
    "MONGO_URL": "mongodb://app:pa/ss-value-7@db.internal:27017/shop",
    # the corpus's: a session cookie under a name that says nothing (FASTLANE_SESSION, found
    # by detect-secrets), URLs with credentials, base64 of a kubeconfig, a wallet's words…
    **dict(secret_corpus.ENV_SECRETS),
}


def fragments(value: str) -> list[str]:
    """What of a value would show in any rendering of it: each of its longer lines."""
    return [line.strip() for line in value.splitlines() if len(line.strip()) >= 8] or [value]


CHOSEN = {"BW_SESSION": "bitwarden-session-passed-on-purpose"}


def test_no_secret_reaches_the_command_the_model_or_the_log(
    caretz: Caretz, server: ModelServer, workspace: Path
):
    caretz.write_config({"profiles": {"general": {"shellEnv": ["BW_SESSION"]}}})
    server.add(tool("bash", command="env; echo TERM=[$TERM] NO_COLOR=[$NO_COLOR]"), text("ok"))

    run = caretz("-p", "show the environment", env={**SECRETS, **CHOSEN, "TERM": "xterm"})

    assert run.code == 0, run.stderr
    (result,) = [
        block
        for block in server.requests[1].messages[-1]["content"]
        if block.get("type") == "tool_result"
    ]
    output = result["content"] if isinstance(result["content"], str) else json.dumps(result)
    assert "BW_SESSION=bitwarden-session-passed-on-purpose" in output
    assert "TERM=[dumb] NO_COLOR=[1]" in output
    assert "HOME=" in output  # the command did print its environment
    requests = json.dumps([request.body for request in server.requests])
    events = (caretz.data_dir / "sessions" / run.session_id / "events.jsonl").read_text()
    for name, value in SECRETS.items():
        for where, seen in (("output", output), ("requests", requests), ("events", events)):
            assert all(part not in seen for part in fragments(value)), f"{name}'s value in {where}"
            assert f"{name}=" not in seen, f"{name} in the {where}"
