"""`caretz -p` end to end: the real CLI, a loopback model server, real bash and files."""

from __future__ import annotations

import json
import re

from caretz.agent.outcomes import EXIT_CODES
from tests.e2e.conftest import API_KEY, turn_end, types
from tests.modelserver import Reply, calls, error, text, tool


def test_version_and_help(caretz):
    version = caretz("--version")
    assert version.code == 0
    assert version.stdout.startswith("caretz ")

    helptext = caretz("--help")
    assert helptext.code == 0
    for option in ("--prompt", "--model", "--loop-guard", "--max-tool-calls", "--resume"):
        assert option in helptext.stdout
    epilog = " ".join(helptext.stdout.split("Exit codes:")[1].split())
    for code in EXIT_CODES:  # every exit code the runs can end with is listed
        assert re.search(rf"\b{code}\b", epilog), code


def test_a_turn_streams_text_runs_bash_and_logs_every_step(caretz, server, workspace):
    server.add(
        tool("bash", command="echo hello > greeting.txt && cat greeting.txt"),
        text("I wrote greeting.txt for you."),
    )

    run = caretz("-p", "write a greeting")

    assert run.code == 0, run.stderr
    assert "I wrote greeting.txt for you." in run.stdout
    assert (workspace / "greeting.txt").read_text() == "hello\n"
    assert "bash" in run.stderr and "✓" in run.stderr
    # The second request carries the tool's real output back to the model.
    tool_result = server.requests[1].messages[-1]["content"][0]
    assert tool_result["type"] == "tool_result" and "hello" in tool_result["content"]
    events = caretz.events(run.session_id)
    assert types(events)[:2] == ["Session.Started", "Turn.Started"]
    assert turn_end(events)["status"] == "done"
    assert {"Model.Response", "Tool.Called", "Tool.Result"} <= set(types(events))
    response = next(e for e in events if e["type"] == "Model.Response")
    assert response["usage"]["input_tokens"] == 100 and response["latency_s"] >= 0
    assert all("ts" in e for e in events)
    assert (
        API_KEY not in (caretz.data_dir / "sessions" / run.session_id / "events.jsonl").read_text()
    )


def test_piped_output_is_plain_text(caretz, server):
    server.add(tool("bash", command="false"), text("done"))

    run = caretz("-p", "go")

    assert "\x1b[" not in run.stdout + run.stderr
    assert "✗ bash false" in run.stderr


def test_openai_compatible_endpoint_with_a_bare_model_id(caretz, server):
    server.add(tool("read", path="notes.txt"), text("The notes are empty."), model="qwen-local")

    run = caretz(
        "-p",
        "read my notes",
        "--model",
        "qwen-local",
        "--base-url",
        server.openai_url,
        env={"ANTHROPIC_API_KEY": None},
    )

    assert run.code == 0, run.stderr
    assert [r.path for r in server.requests] == ["/v1/chat/completions"] * 2
    assert "authorization" not in server.requests[0].headers  # no other provider's key
    tool_message = server.requests[1].messages[-1]
    assert tool_message["role"] == "tool" and "notes.txt" in tool_message["content"]


def test_openai_base_url_env_is_honoured(caretz, server):
    server.add(text("hi"), model="gpt-test")

    run = caretz("-p", "hi", "--model", "openai/gpt-test", env={"OPENAI_API_KEY": "sk-openai"})

    assert run.code == 0, run.stderr
    assert server.requests[0].headers["authorization"] == "Bearer sk-openai"


def test_anthropic_request_has_cache_breakpoint_and_project_instructions(caretz, server, workspace):
    (workspace / "AGENTS.md").write_text("Always run `make check` before answering.\n")
    server.add(text("ok"))

    caretz("-p", "hello")

    body = server.requests[0].body
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "Always run `make check` before answering." in server.requests[0].system
    assert server.requests[0].headers["x-api-key"] == API_KEY


def test_missing_api_key_is_one_line_naming_the_env_var(caretz, server):
    run = caretz("-p", "hi", env={"ANTHROPIC_API_KEY": None})

    assert run.code == 2
    assert "ANTHROPIC_API_KEY" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
    assert "Traceback" not in run.stderr
    assert server.requests == []


def test_unknown_provider_fails_at_start(caretz, server):
    run = caretz("-p", "hi", "--model", "nosuch/model-x")

    assert run.code == 2
    assert "nosuch" in run.stderr and "Traceback" not in run.stderr
    assert server.requests == []


def test_broken_profile_names_the_file_and_key(caretz):
    path = caretz.write_config({"profiles": {"general": {"loopGuard": {"repeatThreshold": 0}}}})

    run = caretz("-p", "hi")

    assert run.code == 2
    assert str(path) in run.stderr and "repeatThreshold" in run.stderr
    assert "Traceback" not in run.stderr


def test_bad_tool_arguments_go_back_to_the_model(caretz, server):
    server.add(
        Reply(tool_calls=[("bash", {})], raw_arguments='{"command": "ls'),
        tool("edit", path="missing.py"),
        text("I will stop here."),
    )

    run = caretz("-p", "try things")

    assert run.code == 0, run.stderr
    first_result = server.requests[1].messages[-1]["content"][0]
    assert first_result["is_error"] is True and "JSON" in first_result["content"]
    second_result = server.requests[2].messages[-1]["content"][0]
    assert second_result["is_error"] is True and "old_string" in second_result["content"]


def test_provider_error_mid_stream_keeps_the_partial_turn(caretz, server):
    server.add(tool("bash", command="echo step one"))
    # Every attempt breaks off (retries are instant): the run gives up after the last.
    broken = Reply(
        text="Now I will edit the config file carefully",
        drop_after_events=4,
        headers={"retry-after": "0"},
    )
    server.add(*[broken] * 5)

    run = caretz("-p", "do the work")

    assert run.code == 1
    assert "Traceback" not in run.stderr
    events = caretz.events(run.session_id)
    assert "Tool.Result" in types(events)
    failure = next(e for e in events if e["type"] == "Provider.Error")
    assert failure["partial"]["content"].startswith("Now I")
    assert turn_end(events)["status"] == "error"


def test_rate_limit_is_retried_after_retry_after(caretz, server):
    server.add(error(429, "slow down", retry_after=0), text("answer after the retry"))

    run = caretz("-p", "hi")

    assert run.code == 0, run.stderr
    assert "answer after the retry" in run.stdout
    assert "retrying" in run.stderr
    assert len(server.requests) == 2


def test_server_errors_give_up_with_exit_1(caretz, server):
    server.add(*[error(503, "upstream down", retry_after=0) for _ in range(5)])

    run = caretz("-p", "hi")

    assert run.code == 1
    assert "gave up after 5 attempts" in run.stderr and "upstream down" in run.stderr


def test_max_tool_calls_ends_the_turn_with_exit_4(caretz, server, workspace):
    server.add(calls(("bash", {"command": "touch a"}), ("bash", {"command": "touch b"})))

    run = caretz("-p", "make files", "--max-tool-calls", "1")

    assert run.code == 4
    assert "tool call limit reached" in run.stderr
    assert (workspace / "a").exists() and not (workspace / "b").exists()


def test_budget_limit_is_checked_before_each_request(caretz, server):
    caretz.write_config({"prices": {"anthropic/claude-test": {"input": 1000, "output": 1000}}})
    server.add(tool("bash", command="echo 1"), text("never requested"))

    run = caretz("-p", "spend", "--max-budget-usd", "0.01")

    assert run.code == 4
    assert "budget limit reached" in run.stderr
    assert len(server.requests) == 1


def test_a_budget_needs_a_price_for_the_judge_too(caretz, server):
    caretz.write_config({"prices": {"anthropic/claude-test": {"input": 1, "output": 1}}})
    judged = ("--loop-guard", "active", "--loop-guard-model", "anthropic/unpriced-judge")

    run = caretz("-p", "spend", "--max-budget-usd", "1", *judged)

    assert run.code == 2
    assert run.stderr.startswith(
        "caretz: --max-budget-usd needs a price for 'anthropic/unpriced-judge'"
    )
    assert server.requests == []


def test_output_json_is_events_then_a_result(caretz, server):
    server.add(tool("bash", command="echo hi"), text("all done"))

    run = caretz("-p", "go", "--output", "json")

    assert run.code == 0, run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    assert lines[0]["type"] == "Session.Started"
    result = lines[-1]
    assert result["type"] == "result" and result["status"] == "done"
    assert result["text"] == "all done" and result["tool_calls"] == 1
    assert result["usage"]["output_tokens"] == 40
    assert result["session_id"] == lines[0]["session_id"]


def test_resume_and_continue_carry_the_conversation(caretz, server):
    server.add(text("The answer is 42."))
    first = caretz("-p", "what is the answer?")
    server.add(text("You asked about the answer."), text("Still here."))

    resumed = caretz("-p", "what did I ask?", "--resume", first.session_id)
    continued = caretz("-p", "and now?", "--continue")

    assert resumed.code == 0 and continued.code == 0, resumed.stderr + continued.stderr
    assert resumed.session_id == first.session_id == continued.session_id
    history = [m["content"] for m in server.requests[2].messages]
    assert history[0] == "what is the answer?"
    assert "what did I ask?" in history and history[-1] == "and now?"
    listing = caretz("sessions", "list")
    assert first.session_id in listing.stdout and "3 turn(s)" in listing.stdout


def test_unknown_session_is_a_usage_error(caretz):
    run = caretz("-p", "hi", "--resume", "nope")

    assert run.code == 2
    assert "nope" in run.stderr


def test_config_show_masks_keys(caretz):
    run = caretz("config", "show")

    assert run.code == 0, run.stderr
    assert API_KEY not in run.stdout
    shown = json.loads(run.stdout)
    assert "anthropic" in json.dumps(shown)


def test_prompt_from_stdin(caretz, server):
    server.add(text("read from a pipe"))

    run = caretz(stdin="summarize\n")

    assert run.code == 0, run.stderr
    assert server.requests[0].messages[0]["content"] == "summarize"


def test_a_long_turn_is_compacted_before_it_outgrows_the_context_window(caretz, server):
    caretz.write_config({"profiles": {"general": {"contextWindow": 4000}}})
    # 1,500 characters: within a 4k window's result cap, so the newest arrives whole.
    noisy = "python3 -c \"print('x' * 1500)\""
    # The server reports how full the context is, as real ones do: the meter goes by that.
    step = [Reply(tool_calls=[("bash", {"command": noisy})], usage=(u, 20, 0)) for u in (900, 2900)]
    # Before the third request the context is past 80%: the older steps are summarized.
    server.add(*step, text("SUMMARY: printed x's."), step[0], text("done"))

    run = caretz("-p", "make noise")

    assert run.code == 0, run.stderr
    last = server.requests[-1].messages
    outputs = [
        b["content"]
        for m in last
        if m["role"] == "user"
        for b in m["content"]
        if isinstance(m["content"], list) and b.get("type") == "tool_result"
    ]
    assert len(outputs) == 2  # the first step is summarized, the newest kept whole
    assert all("x" * 1500 in output for output in outputs)
    assert "SUMMARY: printed x's." in last[0]["content"]
    compacted = [e for e in caretz.events(run.session_id) if e["type"] == "Session.Compacted"]
    assert compacted and compacted[0]["summarized"] == 3 and compacted[0]["trimmed"] == 0


def test_ctrl_c_ends_the_turn_kills_the_command_and_keeps_the_log(caretz, server, workspace):
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.sandbox.helpers import marker, sleepers

    mark = marker()  # inside the sandbox `$!` is not the host PID: find the sleep by its mark
    server.add(tool("bash", command=f"echo started; sleep {mark} & wait"))
    process = subprocess.Popen(
        [sys.executable, "-m", "caretz", "-p", "wait for it"],
        cwd=workspace,
        env=caretz.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not sleepers(mark):
        assert time.monotonic() < deadline, "the command never started"
        time.sleep(0.05)
    sleep_pid = sleepers(mark)[0]
    time.sleep(0.3)  # let "started" reach the output pipe

    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)

    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    deadline = time.monotonic() + 30
    while _alive(sleep_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(sleep_pid)
    session_id = stderr.rsplit("session ", 1)[1].strip()
    events = caretz.events(session_id)
    ended = turn_end(events)
    assert ended["status"] == "interrupted"
    # The call had started: its result gives the time it ran and its partial output.
    result = next(e for e in events if e["type"] == "Tool.Result")
    assert result["ended_by"] == "interrupted" and result["exit_code"] is None
    assert result["output"].startswith("started\n[interrupted by the user after ")
    assert os.path.exists(caretz.data_dir / "sessions" / session_id / "events.jsonl")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ", 1)[1][0] not in "ZX"
    except FileNotFoundError:
        return False
