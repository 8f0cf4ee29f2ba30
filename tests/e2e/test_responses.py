"""OpenAI's Responses API through the real CLI: `openai/gpt-5-codex` speaks it by the
built-in model table, against the loopback server's /v1/responses."""

from __future__ import annotations

import pytest

from tests.e2e.test_loop_guard import GO_TEST, GO_TEST_SCRIPT, STUCK, verdict, with_judge
from tests.modelserver import Reply, error, text

MODEL_ID = "gpt-5-codex"
RESPONSES = {"CARETZ_MODEL": f"openai/{MODEL_ID}", "OPENAI_API_KEY": "sk-openai-test-0123456789"}


def kinds(items: list[dict]) -> list[str]:
    return [item.get("type") or item["role"] for item in items]


def reasoning(summary: str, encrypted: str, **kw) -> Reply:
    return Reply(thinking=summary, encrypted_reasoning=encrypted, **kw)


@pytest.fixture
def two_turns(caretz, server):
    """A tool turn with reasoning on both replies; the run and its session's events."""
    server.add(
        reasoning("Run it first.", "enc-first", tool_calls=[("bash", {"command": "echo ran-it"})]),
        reasoning("It printed ran-it.", "enc-second", text="The command printed ran-it."),
    )
    run = caretz("-p", "run the echo", "--reasoning", "medium", env=RESPONSES)
    assert run.code == 0, run.stderr
    return run


def test_a_tool_turn_sends_its_result_and_reasoning_back(caretz, server, two_turns):
    assert "The command printed ran-it." in two_turns.stdout
    first, second = server.requests
    assert first.path == second.path == "/v1/responses"
    assert first.body["store"] is False
    assert first.body["include"] == ["reasoning.encrypted_content"]
    assert first.body["reasoning"] == {"effort": "medium", "summary": "auto"}
    assert "bash" in first.tool_names
    items = second.input
    assert kinds(items) == ["user", "reasoning", "function_call", "function_call_output"]
    assert "run the echo" in items[0]["content"]
    # The reasoning item goes back exactly as the server sent it.
    assert items[1] == {
        "type": "reasoning",
        "id": "rs_scripted",
        "summary": [{"type": "summary_text", "text": "Run it first."}],
        "encrypted_content": "enc-first",
    }
    assert items[2]["call_id"] == items[3]["call_id"] == "call_1"
    assert items[2]["name"] == "bash"
    assert items[3]["output"].strip().endswith("ran-it")
    # The summary is the reply's thinking; usage keeps reasoning tokens.
    replies = [e for e in caretz.events(two_turns.session_id) if e["type"] == "Model.Response"]
    assert [r["message"]["thinking"] for r in replies] == ["Run it first.", "It printed ran-it."]
    assert replies[1]["usage"]["reasoning_tokens"] == len("It printed ran-it.")


def test_continue_sends_the_logged_reasoning_items_back(caretz, server, two_turns):
    server.add(text("Nothing else to do."))

    resumed = caretz("-p", "anything else?", "--continue", env=RESPONSES)

    assert resumed.code == 0, resumed.stderr
    assert resumed.session_id == two_turns.session_id
    items = server.requests[2].input
    assert kinds(items) == [
        *("user", "reasoning", "function_call", "function_call_output"),
        *("reasoning", "assistant", "user"),
    ]
    assert [i["encrypted_content"] for i in items if i.get("type") == "reasoning"] == [
        "enc-first",
        "enc-second",
    ]
    assert items[5] == {"role": "assistant", "content": "The command printed ran-it."}
    assert items[6]["content"].endswith("anything else?")


def test_a_429_is_retried(caretz, server):
    server.add(error(429, "Rate limit reached", retry_after=0), text("After the pause."))

    run = caretz("-p", "hi", env=RESPONSES)

    assert run.code == 0, run.stderr
    assert "retrying in 0s" in run.stderr and "HTTP 429" in run.stderr
    assert "After the pause." in run.stdout
    assert [r.path for r in server.requests] == ["/v1/responses"] * 2


def test_an_error_event_is_one_line_and_exit_1(caretz, server):
    server.add(
        Reply(
            text="Half an answer",
            error_after_events=3,
            error_code="invalid_prompt",
            error_message="Invalid prompt: refused by policy",
        )
    )

    run = caretz("-p", "hi", env=RESPONSES)

    assert run.code == 1
    lines = [line for line in run.stderr.splitlines() if "invalid_prompt" in line]
    assert len(lines) == 1 and "invalid_prompt: Invalid prompt: refused by policy" in lines[0]
    assert "Traceback" not in run.stderr
    assert len(server.requests) == 1  # not a kind worth retrying


def test_a_failed_response_with_a_server_error_is_retried(caretz, server):
    failing = Reply(
        text="Half",
        error_after_events=3,
        error_event="response.failed",
        headers={"retry-after": "0"},
    )
    server.add(failing, text("Whole answer."))

    run = caretz("-p", "hi", env=RESPONSES)

    assert run.code == 0, run.stderr
    assert "server_error: scripted error" in run.stderr and "retrying in 0s" in run.stderr
    assert "Whole answer." in run.stdout and len(server.requests) == 2


def test_the_loop_guards_report_request_forbids_tools(caretz, server, workspace):
    script = workspace / "gotest.sh"
    script.write_text(GO_TEST_SCRIPT)
    script.chmod(0o755)
    server.add(*[Reply(tool_calls=[("bash", {"command": GO_TEST})]) for _ in range(6)])
    server.add(text("I am stuck on testDB: it needs the integration build tag."))
    server.add(verdict(STUCK), verdict(STUCK), model="judge-model")

    run = caretz("-p", "make the tests pass", *with_judge("active"), env=RESPONSES)

    assert run.code == 3, run.stderr
    agent = server.requests_for(MODEL_ID)
    assert len(agent) == 7 and all(r.path == "/v1/responses" for r in agent)
    assert all("tool_choice" not in r.body for r in agent[:6])
    assert agent[6].body["tool_choice"] == "none"
    assert "I am stuck on testDB" in run.stdout
