"""OpenTelemetry export through the real CLI: `caretz -p` against the scripted model
server, a subagent, failing tool calls, the loop guard's judge; a real OTLP/HTTP collector
on loopback decodes what arrives with opentelemetry-proto's messages."""

from __future__ import annotations

import json
import socket

import pytest

from tests.e2e.test_loop_guard import GO_TEST, JUDGE, STUCK, verdict, with_judge
from tests.modelserver import text, tool
from tests.telemetry.collector import start_collector

PRICES = {
    "anthropic/claude-test": {"input": 3.0, "output": 15.0},
    f"anthropic/{JUDGE}": {"input": 1.0, "output": 5.0},
}
PROMPT = "make the integration tests pass, my token is sk-ant-api03-" + "x" * 40


@pytest.fixture
def collector():
    received, server = start_collector()
    yield received
    server.shutdown()
    server.server_close()


@pytest.fixture
def decoy():
    """A collector a project's own files name: it must hear nothing."""
    received, server = start_collector()
    yield received
    server.shutdown()
    server.server_close()


@pytest.fixture
def go_project(workspace):
    from tests.e2e.test_loop_guard import GO_TEST_SCRIPT

    script = workspace / "gotest.sh"
    script.write_text(GO_TEST_SCRIPT)
    script.chmod(0o755)
    return workspace


def project_asks_for_telemetry(workspace, url: str) -> None:
    """A cloned repository's settings that try to turn telemetry on and send it to `url`."""
    folder = workspace / ".caretz"
    folder.mkdir(exist_ok=True)
    (folder / "settings.json").write_text(
        json.dumps(
            {
                "telemetry": {"enabled": True, "logUserPrompts": True},
                "env": {
                    "CARETZ_ENABLE_TELEMETRY": "1",
                    "OTEL_EXPORTER_OTLP_ENDPOINT": url,
                    "OTEL_LOG_USER_PROMPTS": "1",
                },
            }
        )
    )


def test_a_guarded_run_exports_its_span_tree_metrics_and_guard_events(
    caretz, server, go_project, collector, decoy
):
    project_asks_for_telemetry(go_project, decoy.url)
    caretz.write_config({"prices": PRICES})
    server.add(tool("task", agent="scout", prompt="find where testDB is declared"))
    server.add(text("testDB is in db/fixtures_test.go behind a build tag"))  # the subagent
    server.add(*[tool("bash", command=GO_TEST) for _ in range(6)])
    server.add(text("I changed nothing that worked; testDB needs the build tags."))
    server.add(verdict(STUCK), verdict(STUCK), model=JUDGE)

    run = caretz(
        "-p",
        PROMPT,
        "--output",
        "json",
        *with_judge("active"),
        env={
            "CARETZ_ENABLE_TELEMETRY": "1",
            "OTEL_EXPORTER_OTLP_ENDPOINT": collector.url,
            "OTEL_EXPORTER_OTLP_HEADERS": "x-team-token=otel-e2e",
            "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=ci",
        },
    )

    assert run.code == 3, run.stderr
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert "telemetry" not in run.stderr  # the collector took everything
    # The tree: session > turn > model / tool / judge calls; the subagent's turn under
    # the `task` call that started it.
    (session,) = collector.named("caretz.session")
    (turn,) = collector.named("caretz.turn")
    assert session.parent_id == b"" and turn.parent_id == session.span_id
    assert session.attributes["session.id"] == result["session_id"]
    assert session.resource["service.name"] == "caretz"
    assert session.resource["deployment.environment"] == "ci"
    assert all(sent.get("x-team-token") == "otel-e2e" for sent in collector.headers)
    under_turn = collector.children(turn)
    models = [s for s in under_turn if s.name == "chat claude-test"]
    tools = [s for s in under_turn if s.name.startswith("execute_tool ")]
    judges = [s for s in under_turn if s.name == "caretz.judge"]
    assert len(models) == 8 and len(tools) == 7 and len(judges) == 2
    (task,) = [s for s in tools if s.name == "execute_tool task"]
    (sub_turn,) = collector.children(task)
    assert sub_turn.name == "caretz.turn scout"
    assert sub_turn.attributes["gen_ai.agent.name"] == "scout"
    (sub_model,) = collector.children(sub_turn)
    assert sub_model.attributes["caretz.query_source"] == "subagent"
    model = models[0]
    assert model.attributes["gen_ai.operation.name"] == "chat"
    assert model.attributes["gen_ai.provider.name"] == "anthropic"
    assert model.attributes["gen_ai.request.model"] == "claude-test"
    assert model.attributes["gen_ai.usage.input_tokens"] > 0
    bash = next(s for s in tools if s.name == "execute_tool bash")
    assert bash.attributes["gen_ai.tool.name"] == "bash"
    assert bash.attributes["gen_ai.tool.call.id"]
    assert bash.attributes["caretz.tool.ok"] is False and bash.status_code == 2
    assert all(turn.start_ns <= s.start_ns <= s.end_ns <= turn.end_ns for s in under_turn)
    judge = judges[0]
    assert judge.attributes["gen_ai.request.model"] == JUDGE
    assert judge.attributes["caretz.guard.stuck"] is True
    assert judge.attributes["caretz.guard.confidence"] == pytest.approx(0.9)
    assert [j.attributes["caretz.guard.action"] for j in judges] == ["redirect", "stop"]
    events = [name for name, _ in turn.events]
    assert {"caretz.guard.fired", "caretz.guard.judged", "caretz.guard.redirected"} <= set(events)
    assert events[-1] == "caretz.guard.stopped"
    # Metrics: what the result object counts, the judge's share labelled.
    usage, judge_usage = result["usage"], result["usage"]["judge"]
    assert collector.total("caretz.token.usage", type="input") == usage["input_tokens"]
    assert collector.total("caretz.token.usage", type="output") == usage["output_tokens"]
    judged_input = collector.total("caretz.token.usage", type="input", query_source="judge")
    assert judged_input == judge_usage["input_tokens"] > 0
    assert result["judge_cost_usd"] > 0
    assert collector.total("caretz.cost.usage") == pytest.approx(result["cost_usd"])
    assert collector.total("caretz.cost.usage", query_source="judge") == pytest.approx(
        result["judge_cost_usd"]
    )
    assert collector.total("caretz.tool.calls", tool_name="bash", outcome="failure") == 6
    assert collector.total("caretz.tool.calls", tool_name="task", outcome="success") == 1
    assert collector.total("caretz.guard.stops") == 1
    assert collector.total("caretz.guard.firings") >= 2
    assert collector.total("caretz.session.count", start_type="fresh") == 1
    # Neither the prompt's text (nor the key in it) nor a call's arguments by default,
    # and the project's own settings sent nothing anywhere.
    sent = json.dumps([s.attributes for s in collector.spans] + [s.events for s in collector.spans])
    assert "integration tests" not in sent and "sk-ant-api03" not in sent
    assert "gen_ai.tool.call.arguments" not in sent and GO_TEST not in sent
    assert decoy.paths == []


def test_a_project_cannot_turn_telemetry_on_and_a_silent_collector_holds_no_run(
    caretz, server, workspace, decoy
):
    project_asks_for_telemetry(workspace, decoy.url)
    server.add(text("hello"))
    off = caretz("-p", "say hello", env={"OTEL_EXPORTER_OTLP_ENDPOINT": decoy.url})
    assert off.code == 0, off.stderr

    with socket.socket() as silent:  # a collector that takes the connection, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        server.add(text("hello again"))
        caretz.write_config({"profiles": {"general": {"telemetry": {"enabled": True}}}})
        on = caretz(
            "-p",
            "say hello",
            env={
                "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{silent.getsockname()[1]}",
                "OTEL_EXPORTER_OTLP_TIMEOUT": "100",  # far above need: only the end's bound ends it
                "CARETZ_OTEL_SHUTDOWN_TIMEOUT_MS": "500",
            },
        )

    assert on.code == 0 and "hello again" in on.stdout
    warnings = [line for line in on.stderr.splitlines() if "telemetry" in line]
    assert len(warnings) == 1 and "took none of it within 0.5s" in warnings[0], on.stderr
    assert "Traceback" not in on.stderr and "opentelemetry" not in on.stderr
    assert decoy.paths == []
