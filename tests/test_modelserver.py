"""The loopback model server itself: routing, scripting, recording, wire shapes, shutdown."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.modelserver import ModelServer, RecordedRequest, Reply, calls, error, text, tool

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10) as client:
        yield client


def anthropic_body(model: str = "claude-x", stream: bool = True, **extra) -> dict:
    return {
        "model": model,
        "max_tokens": 100,
        "stream": stream,
        "messages": [{"role": "user", "content": "hi"}],
        **extra,
    }


def openai_body(model: str = "gpt-x", stream: bool = True, **extra) -> dict:
    return {
        "model": model,
        "stream": stream,
        "messages": [{"role": "user", "content": "hi"}],
        **extra,
    }


def sse_events(response: httpx.Response) -> list[tuple[str, str]]:
    """(event name, data) pairs from a raw SSE body."""
    events, name = [], ""
    for line in response.text.splitlines():
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            events.append((name, line[6:]))
            name = ""
    return events


def test_model_queues_come_before_the_shared_queue(server, http):
    server.add(text("shared one"), text("shared two"))
    server.add(text("for opus"), model="opus")

    answers = []
    for model in ["sonnet", "opus", "opus"]:
        body = anthropic_body(model, stream=False)
        answers.append(
            http.post(server.url + "/v1/messages", json=body).json()["content"][0]["text"]
        )

    assert answers == ["shared one", "for opus", "shared two"]
    assert [r.model for r in server.requests_for("opus")] == ["opus", "opus"]
    assert server.pending() == 0


def test_running_out_of_script_answers_500_naming_the_model(server, http):
    response = http.post(server.openai_url + "/chat/completions", json=openai_body("gpt-lost"))

    assert response.status_code == 500
    assert response.headers["retry-after"] == "0"
    assert (
        response.json()["error"]["message"]
        == "model server: no scripted reply left for model gpt-lost"
    )
    assert len(server.requests) == 1  # recorded even though nothing answered it


def test_responders_are_the_fallback_and_may_pass(server, http):
    seen: list[str] = []

    def passes(request: RecordedRequest) -> Reply | None:
        seen.append(request.model)
        return None

    server.on(passes)
    server.on(lambda request: text(f"echo {request.messages[-1]['content']}"))
    server.add(text("queued first"))

    first = http.post(server.url + "/v1/messages", json=anthropic_body(stream=False)).json()
    second = http.post(server.url + "/v1/messages", json=anthropic_body(stream=False)).json()

    assert first["content"][0]["text"] == "queued first"
    assert second["content"][0]["text"] == "echo hi"
    assert seen == ["claude-x"]


def test_a_failing_responder_becomes_a_visible_error(server, http):
    server.on(lambda request: 1 / 0)

    response = http.post(server.url + "/v1/messages", json=anthropic_body())

    assert response.status_code == 500
    assert "responder failed: ZeroDivisionError" in response.json()["error"]["message"]


def test_requests_are_recorded_with_lower_case_headers_and_parsed_bodies(server, http):
    server.add(text("ok"))
    body = openai_body(tools=[{"type": "function", "function": {"name": "bash", "parameters": {}}}])
    body["messages"].insert(0, {"role": "system", "content": "Be brief."})

    http.post(server.openai_url + "/chat/completions", json=body, headers={"X-Custom-Thing": "1"})

    (recorded,) = server.requests
    assert recorded.path == "/v1/chat/completions"
    assert recorded.headers["x-custom-thing"] == "1"
    assert recorded.body == body
    assert recorded.protocol == "openai"
    assert recorded.system == "Be brief."
    assert recorded.tool_names == ["bash"]


def test_anthropic_stream_has_the_real_event_sequence(server, http):
    server.add(
        Reply(
            text="hello world",
            thinking="hmm",
            tool_calls=[("bash", {"command": "ls"})],
            chunk_size=4,
        )
    )
    body = anthropic_body(system=[{"type": "text", "text": "Sys"}], tools=[{"name": "bash"}])

    response = http.post(server.url + "/v1/messages", json=body)

    assert response.headers["content-type"] == "text/event-stream"
    events = sse_events(response)
    names = [name for name, _ in events]
    assert names[:2] == ["message_start", "ping"] and names[-2:] == [
        "message_delta",
        "message_stop",
    ]
    assert names.count("content_block_start") == 3 == names.count("content_block_stop")
    deltas = [json.loads(data)["delta"] for name, data in events if name == "content_block_delta"]
    assert [d["text"] for d in deltas if d["type"] == "text_delta"] == ["hell", "o wo", "rld"]
    assert (
        "".join(d["partial_json"] for d in deltas if d["type"] == "input_json_delta")
        == '{"command": "ls"}'
    )
    assert {"type": "signature_delta", "signature": "scripted-signature"} in deltas
    assert json.loads(events[-2][1])["delta"]["stop_reason"] == "tool_use"
    assert server.requests[0].system == "Sys" and server.requests[0].tool_names == ["bash"]


def test_openai_stream_sends_usage_only_when_asked(server, http):
    server.add(text("hi there", usage=(7, 3, 2)), text("again"))
    url = server.openai_url + "/chat/completions"

    with_usage = sse_events(
        http.post(url, json=openai_body(stream_options={"include_usage": True}))
    )
    without = sse_events(http.post(url, json=openai_body()))

    assert with_usage[-1] == ("", "[DONE]") and without[-1] == ("", "[DONE]")
    usage = json.loads(with_usage[-2][1])["usage"]
    assert usage["prompt_tokens"] == 7 and usage["completion_tokens"] == 3
    assert usage["prompt_tokens_details"] == {"cached_tokens": 2}
    assert all("usage" not in json.loads(data) for _, data in without[:-1])
    finish = json.loads(without[-2][1])["choices"][0]["finish_reason"]
    assert finish == "stop"


def test_tool_call_ids_are_unique_across_replies(server, http):
    server.add(tool("bash", command="ls"), calls(("read", {"path": "a"}), ("read", {"path": "b"})))
    url = server.openai_url + "/chat/completions"

    replies = [http.post(url, json=openai_body(stream=False)).json() for _ in range(2)]

    ids = [c["id"] for reply in replies for c in reply["choices"][0]["message"]["tool_calls"]]
    assert ids == ["call_1", "call_2", "call_3"]
    assert replies[0]["choices"][0]["finish_reason"] == "tool_calls"


@pytest.mark.parametrize(
    ("path", "shape"),
    [
        (
            "/v1/messages",
            {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}},
        ),
        (
            "/v1/chat/completions",
            {"error": {"message": "busy", "type": "overloaded_error", "param": None, "code": None}},
        ),
    ],
)
def test_error_replies_use_each_protocols_shape_and_headers(server, http, path, shape):
    server.add(error(529, "busy", retry_after=1.5))

    response = http.post(server.url + path, json=openai_body())

    assert response.status_code == 529
    assert response.headers["retry-after"] == "1.5"
    assert response.json() == shape


def test_an_openai_error_carries_its_code(server, http):
    server.add(error(400, "too long", code="context_length_exceeded"))

    response = http.post(server.openai_url + "/chat/completions", json=openai_body())

    assert response.json()["error"]["code"] == "context_length_exceeded"


def test_props_answers_as_llama_cpp_when_set(server, http):
    assert http.get(server.url + "/props").status_code == 404
    server.props = {"default_generation_settings": {"n_ctx": 4096}}

    assert http.get(server.url + "/props").json()["default_generation_settings"]["n_ctx"] == 4096


def test_drop_after_events_cuts_the_connection_mid_stream(server, http):
    server.add(text("abcdefghij", chunk_size=2, drop_after_events=3), text("after"))
    lines = []

    with (
        pytest.raises(httpx.RemoteProtocolError),
        http.stream(
            "POST", server.openai_url + "/chat/completions", json=openai_body()
        ) as response,
    ):
        lines.extend(line for line in response.iter_lines() if line)

    assert len(lines) == 3
    follow_up = http.post(server.openai_url + "/chat/completions", json=openai_body(stream=False))
    assert follow_up.json()["choices"][0]["message"]["content"] == "after"


def test_health_and_models(server, http):
    server.add(text("x"), model="claude-small")

    assert http.get(server.url + "/health").json() == {"status": "ok"}
    models = http.get(server.openai_url + "/models").json()
    assert [m["id"] for m in models["data"]] == ["claude-small"]


def test_stop_closes_idle_connections_and_interrupts_delays():
    server = ModelServer().start()
    server.add(text("slow", delay_s=60))
    idle = socket.create_connection(("127.0.0.1", int(server.url.rsplit(":", 1)[1])), timeout=10)
    client = httpx.Client(timeout=30)
    outcome: list[object] = []

    def slow_request() -> None:
        try:
            outcome.append(client.post(server.url + "/v1/messages", json=anthropic_body()))
        except httpx.HTTPError as exc:
            outcome.append(exc)

    waiter = threading.Thread(target=slow_request)
    waiter.start()
    for _ in range(1000):  # until the request arrived and waits out its delay
        if server.requests:
            break
        threading.Event().wait(0.01)
    server.stop()
    waiter.join(timeout=10)

    assert not waiter.is_alive()
    assert isinstance(outcome[0], httpx.HTTPError)
    assert idle.recv(1) == b""  # the server closed the idle connection
    idle.close()
    client.close()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", int(server.url.rsplit(":", 1)[1])), timeout=2)


def test_reply_from_dict_accepts_pairs_and_objects():
    reply = Reply.from_dict(
        {
            "text": "t",
            "tool_calls": [
                ["bash", {"command": "ls"}],
                {"name": "read", "arguments": {"path": "a"}},
            ],
            "usage": [1, 2, 3],
        }
    )

    assert reply.tool_calls == [("bash", {"command": "ls"}), ("read", {"path": "a"})]
    assert reply.usage == (1, 2, 3)
    with pytest.raises(ValueError, match="unknown Reply fields \\['txt'\\]"):
        Reply.from_dict({"txt": "typo"})


def test_standalone_server_replays_its_script_in_a_loop(tmp_path, http):
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"text": "one"}, {"tool_calls": [["bash", {"command": "ls"}]]}]))
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.modelserver", "--script", str(script)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        answers = []
        for _ in range(3):
            reply = http.post(url + "/v1/messages", json=anthropic_body(stream=False)).json()
            answers.append(reply["content"][0].get("text") or reply["content"][0]["name"])
        assert answers == ["one", "bash", "one"]
    finally:
        process.terminate()
    assert process.wait(timeout=10) == 0


def test_standalone_server_rejects_a_bad_script(tmp_path):
    script = tmp_path / "bad.json"
    script.write_text('{"text": "not a list"}')

    done = subprocess.run(
        [sys.executable, "-m", "tests.modelserver", "--script", str(script)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=30,
    )

    assert done.returncode == 2
    assert "expected a JSON list of replies" in done.stderr
