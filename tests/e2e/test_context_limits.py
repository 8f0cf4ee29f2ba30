"""Context and output limits, through the real CLI and the loopback model server.

How full the context is comes from the usage figures the scripted server reports,
as a real server's do; no test depends on a hosted model's real token counts.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from caretz.agent.compaction import SUMMARY_HEADER, SUMMARY_SYSTEM, TASK_HEADER
from tests.modelserver import RecordedRequest, Reply, calls, error, text, tool

OPENAI_MODEL = "gpt-test"
OPENAI = {"OPENAI_API_KEY": "sk-openai-test"}


def big(letter: str) -> str:
    """A bash command printing 1,500 copies of `letter` (within a 4k window's result cap)."""
    return f"python3 -c \"print('{letter}' * 1500)\""


def by_protocol(protocol: str) -> tuple[list[str], dict[str, str]]:
    """The extra arguments and environment that run caretz on `protocol`."""
    if protocol == "openai":
        return ["--model", f"openai/{OPENAI_MODEL}"], OPENAI
    return [], {}


def tool_results(request: RecordedRequest) -> list[str]:
    """The tool results a request sends, in order, whichever protocol it speaks."""
    results = []
    for message in request.messages:
        if message["role"] == "tool":
            results.append(message["content"])
        elif message["role"] == "user" and isinstance(message["content"], list):
            results += [b.get("content", "") for b in message["content"] if "tool_use_id" in b]
    return results


def compactions(caretz: Any, session_id: str) -> list[dict[str, Any]]:
    return [e for e in caretz.events(session_id) if e["type"] == "Session.Compacted"]


# ------------------------------------------------------------------ compaction in a turn


def test_a_long_turn_summarizes_older_steps_and_delivers_the_newest_result_whole(
    caretz, server, workspace
):
    caretz.write_config({"profiles": {"general": {"contextWindow": 4000}}})
    plan = {"todos": [{"content": "Print the letters", "status": "in_progress"}]}
    server.add(
        calls(("todo", plan), ("write", {"path": "notes.txt", "content": "letters\n"})),
        tool("bash", command=big("A")),
        # The server says the context is nearly full now: the next request compacts first.
        Reply(tool_calls=[("bash", {"command": big("B")})], usage=(3000, 20, 0)),
        text("SUMMARY: printed A's; the plan and notes.txt are in place."),
        text("done"),
    )

    run = caretz("-p", "print the letters")

    assert run.code == 0, run.stderr
    summary_request = server.requests[3]
    assert summary_request.system == SUMMARY_SYSTEM
    last = server.requests[-1]
    first = last.messages[0]["content"]
    assert first.startswith(SUMMARY_HEADER) and "SUMMARY: printed A's" in first
    # Kept word for word: the plan, the files changed, the task.
    assert "[>] Print the letters" in first and "Files changed so far: notes.txt" in first
    assert first.endswith(f"{TASK_HEADER}\n\nprint the letters")
    results = tool_results(last)
    assert len(results) == 1 and "B" * 1500 in results[0]  # the newest result, whole
    assert "A" * 100 not in json.dumps(last.body)  # the older step is summarized away
    compacted = compactions(caretz, run.session_id)
    assert len(compacted) == 1 and compacted[0]["summarized"] == 6  # prompt … result A
    assert compacted[0]["trimmed"] == 0
    assert "compacted the conversation" in run.stderr


@pytest.mark.parametrize(
    ("protocol", "refusal"),
    [
        ("anthropic", error(400, "prompt is too long: 212000 tokens > 200000 maximum")),
        (
            "openai",
            error(
                400,
                "This model's maximum context length is 128000 tokens. However, your "
                "messages resulted in 131000 tokens. Please reduce the length of the messages.",
                code="context_length_exceeded",
            ),
        ),
    ],
)
def test_prompt_too_long_compacts_and_retries_once(caretz, server, protocol, refusal):
    args, env = by_protocol(protocol)
    server.add(
        tool("bash", command=big("A")),
        tool("bash", command=big("B")),
        refusal,
        text("SUMMARY: printed A's."),
        text("done after compacting"),
    )

    run = caretz("-p", "print the letters", *args, env=env)

    assert run.code == 0, run.stderr
    refused, summary, retried = server.requests[2:]
    assert summary.system == SUMMARY_SYSTEM
    assert len(json.dumps(retried.body)) < len(json.dumps(refused.body))
    assert "B" * 1500 in json.dumps(retried.body)  # the newest result, whole
    compacted = compactions(caretz, run.session_id)
    assert [c["reason"] for c in compacted] == ["overflow"]
    kinds = [e["type"] for e in caretz.events(run.session_id)]
    assert kinds.index("Model.PromptTooLong") < kinds.index("Session.Compacted")
    assert "prompt is too long" in run.stderr
    assert "done after compacting" in run.stdout


def test_prompt_too_long_with_nothing_to_compact_is_an_error(caretz, server):
    server.add(error(400, "prompt is too long: 212000 tokens > 200000 maximum"))

    run = caretz("-p", "hi")

    assert run.code == 1
    assert "prompt is too long" in run.stderr
    assert len(server.requests) == 1  # nothing to make smaller: no retry


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_a_llama_cpp_servers_n_ctx_caps_the_window(caretz, server, protocol):
    args, env = by_protocol(protocol)
    server.props = {"default_generation_settings": {"n_ctx": 4096}}
    server.add(
        tool("bash", command=big("A")),
        Reply(tool_calls=[("bash", {"command": big("B")})], usage=(2950, 20, 0)),
        text("SUMMARY: printed A's."),
        text("done"),
    )

    run = caretz("-p", "print", *args, env=env)

    assert run.code == 0, run.stderr
    # The table's window for an unknown model is 128k: only the server's 4,096 compacts.
    assert len(compactions(caretz, run.session_id)) == 1
    assert server.requests[2].system == SUMMARY_SYSTEM


# ------------------------------------------------------------------ the output limit


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_a_tool_call_cut_off_at_max_tokens_is_not_run(caretz, server, workspace, protocol):
    args, env = by_protocol(protocol)
    caretz.write_config({"profiles": {"general": {"maxTokens": 2000}}})
    server.add(
        Reply(
            tool_calls=[("write", {})],
            raw_arguments='{"path": "big.py", "content": "print(1)\\nprint(',
            stop_reason="max_tokens",
        ),
        text("I will write it in smaller pieces."),
    )

    run = caretz("-p", "write big.py", *args, env=env)

    assert run.code == 0, run.stderr
    assert not (workspace / "big.py").exists()
    (result,) = tool_results(server.requests[1])
    assert result.startswith("Not run: your reply hit the 2,000-token output limit")
    assert "Write smaller pieces" in result and "split a big file" in result
    assert "hit the 2,000-token output limit" in run.stderr
    limit = [e for e in caretz.events(run.session_id) if e["type"] == "Model.OutputLimit"]
    assert [e["action"] for e in limit] == ["calls_not_run"]


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_a_text_reply_cut_off_at_max_tokens_is_continued_and_joined(caretz, server, protocol):
    args, env = by_protocol(protocol)
    server.add(
        text("The first half, ", stop_reason="max_tokens"),
        text("and the second half.", stop_reason="end_turn"),
    )

    run = caretz("-p", "explain", "--output", "json", *args, env=env)

    assert run.code == 0, run.stderr
    result = json.loads(run.stdout.splitlines()[-1])
    assert result["text"] == "The first half, and the second half."
    follow_up = server.requests[1].messages
    assert "cut off" in follow_up[-1]["content"] and "Continue exactly" in follow_up[-1]["content"]
    assert follow_up[-2]["role"] == "assistant"


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_a_reply_cut_off_three_times_ends_with_the_limit_exit_code(caretz, server, protocol):
    args, env = by_protocol(protocol)
    server.add(*[text(f"part {n} ", stop_reason="max_tokens") for n in range(3)])

    run = caretz("-p", "explain", "--output", "json", *args, env=env)

    assert run.code == 4, run.stderr
    result = json.loads(run.stdout.splitlines()[-1])
    assert result["status"] == "limit"
    assert "output limit 3 times" in result["message"] and "maxTokens" in result["message"]
    assert len(server.requests) == 3


def test_an_empty_reply_at_the_limit_is_never_done_with_the_previous_text(caretz, server):
    # OpenAI's finish_reason "length" with no content: the reasoning used the budget.
    empty = Reply(thinking="thinking " * 50, stop_reason="max_tokens")
    server.add(Reply(text="Let me look.", tool_calls=[("bash", {"command": "true"})]))
    server.add(empty, empty, empty)

    run = caretz("-p", "go", "--output", "json", *by_protocol("openai")[0], env=OPENAI)

    assert run.code == 4, run.stderr
    result = json.loads(run.stdout.splitlines()[-1])
    assert result["status"] == "limit" and result["text"] == ""
    note = server.requests[2].messages[-1]["content"]
    assert "before it said anything" in note and "reasoning used the whole budget" in note


# ------------------------------------------------------------------ the model's defaults


def test_thinking_is_on_by_default_with_the_interleaved_header_and_the_models_limit(caretz, server):
    server.add(text("hi"), text("hi"))

    on = caretz("-p", "hi", "--model", "anthropic/claude-sonnet-4-5")
    off = caretz("-p", "hi", "--model", "anthropic/claude-sonnet-4-5", "--reasoning", "off")

    assert on.code == off.code == 0, on.stderr + off.stderr
    thinking, plain = server.requests
    assert thinking.headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    assert thinking.body["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    assert thinking.body["max_tokens"] == 32_000  # the model table's, not 8,192
    assert "anthropic-beta" not in plain.headers and "thinking" not in plain.body
    assert plain.body["max_tokens"] == 32_000


@pytest.mark.parametrize(
    ("model", "max_tokens", "effort"),
    [("gpt-5.1", 32_000, "medium"), ("gpt-4o", 16_384, None), ("llama-3-8b", 8_192, None)],
)
def test_openai_models_get_their_familys_max_tokens_and_reasoning(
    caretz, server, model, max_tokens, effort
):
    server.add(text("hi"))

    run = caretz("-p", "hi", "--model", f"openai/{model}", env=OPENAI)

    assert run.code == 0, run.stderr
    body = server.requests[0].body
    assert body["max_tokens"] == max_tokens
    assert body.get("reasoning_effort") == effort
