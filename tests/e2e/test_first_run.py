"""A first run without a key, and `caretz doctor`: the real CLI end to end.

No key is not a dead end: the error names the other ways in (a key that is set, an
OpenAI-compatible server, a GGUF file) and `caretz doctor` says what is set up here, one
line an item, never a key's value, exit 0 only when the default model can run.
"""

from __future__ import annotations

import json
import os
import socket

from tests.e2e.conftest import API_KEY, Caretz
from tests.modelserver import ModelServer

OTHER_KEY = "sk-openai-test-value-987654"


def doctor_lines(run) -> dict[str, str]:
    """Each item's line by its item ("model anthropic/…" by "model")."""
    found: dict[str, str] = {}
    for line in run.stdout.splitlines()[1:]:
        item = line[2:].split(":", 1)[0]
        found[item.split()[0] if item.startswith("model ") else item] = line
    return found


def test_no_key_names_every_other_way_in(caretz: Caretz, server: ModelServer):
    bare = caretz("-p", "hello", env={"ANTHROPIC_API_KEY": None})
    with_other = caretz("-p", "hello", env={"ANTHROPIC_API_KEY": None, "OPENAI_API_KEY": OTHER_KEY})

    assert bare.code == 2 and with_other.code == 2
    [line] = bare.stderr.splitlines()  # one line, naming every way in
    assert line.startswith(
        "caretz: missing API key for provider 'anthropic': set ANTHROPIC_API_KEY, or take "
        "another way in: another provider's key (OPENAI_API_KEY with --model openai/gpt-5.1; "
    )
    assert "--base-url http://127.0.0.1:8080/v1 --model NAME" in line  # a local server
    assert "--model local/PATH.gguf" in line  # a GGUF file
    assert line.endswith("caretz doctor says what is set up here")
    assert "another way in: OPENAI_API_KEY is set: --model openai/gpt-5.1;" in with_other.stderr
    assert OTHER_KEY not in with_other.stderr
    assert server.requests == []


def test_doctor_without_a_key_says_what_is_missing_and_exits_1(caretz: Caretz):
    run = caretz("doctor", env={"ANTHROPIC_API_KEY": None, "OPENAI_API_KEY": OTHER_KEY})

    assert run.code == 1, run.stdout
    lines = doctor_lines(run)
    assert run.stdout.startswith("caretz ")
    assert lines["provider keys"].startswith("✓ provider keys: set: OPENAI_API_KEY; not set: ")
    assert "ANTHROPIC_API_KEY" in lines["provider keys"]
    model = lines["model"]
    assert model.startswith("✗ model anthropic/claude-test: ANTHROPIC_API_KEY is not set")
    assert (
        "fix: set ANTHROPIC_API_KEY, or run a model your keys reach: --model openai/gpt-5.1"
        in model
    )
    for item in ("settings", "sandbox", "git", "ripgrep", "data dir", "project", "MCP servers"):
        assert item in lines, run.stdout
    assert OTHER_KEY not in run.stdout + run.stderr


def test_doctor_with_everything_set_up_exits_0_and_says_what_needs_a_look(
    caretz: Caretz, server: ModelServer, workspace
):
    caretz.write_config({"profiles": {"general": {"mcpServers": {"clock": {"command": "true"}}}}})
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"db": {"command": "true"}}}))
    caretz.data_dir.mkdir(parents=True)
    caretz.data_dir.chmod(0o755)

    run = caretz("doctor")

    assert run.code == 0, run.stdout
    lines = doctor_lines(run)
    assert lines["model"] == (
        f"✓ model anthropic/claude-test: the server at {server.url} answers, its key "
        "ANTHROPIC_API_KEY is set"
    )
    assert lines["sandbox"].startswith("✓ sandbox: bwrap (workspace-write, network off")
    # The data dir an older caretz left open is closed as every command starts.
    assert lines["data dir"] == f"✓ data dir: {caretz.data_dir} (0700)"
    assert caretz.data_dir.stat().st_mode & 0o777 == 0o700
    assert lines["project"].startswith(f"! project: {workspace}: this project's configuration")
    assert lines["project"].endswith("(fix: caretz trust)")
    assert lines["MCP servers"].startswith("✓ MCP servers: clock, db (.mcp.json, not approved)")
    assert API_KEY not in run.stdout + run.stderr
    assert server.requests == []  # the model's server is asked for its list, never a reply


def test_doctor_finds_a_local_server_that_is_not_running(caretz: Caretz):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"  # nothing listens once closed

    run = caretz("--base-url", url, "--model", "qwen3", "doctor")

    assert run.code == 1, run.stdout
    assert doctor_lines(run)["model"] == (
        f"✗ model qwen3: nothing answers at {url} (fix: start it, or name its URL with --base-url)"
    )
    assert os.environ.get("CARETZ_API_KEY") is None  # nothing asked for a key
