"""What a new user gets wrong, refused in one line with exit 2: the real CLI end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Caretz, Run
from tests.e2e.hook_scripts import hooks_entry
from tests.modelserver import Reply, calls, text, tool
from tests.web.server import Route, WebServer

GARBAGE = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "garbage.py"


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("caretz: ")
    return lines[0]


@pytest.mark.parametrize("prompt", ["", "   ", "\n\t"])
def test_an_empty_prompt_is_refused(caretz, server, prompt):
    run = caretz("-p", prompt)

    assert run.code == 2
    assert "-p needs a prompt" in one_line(run.stderr)
    assert server.requests == []
    assert not (caretz.data_dir / "sessions").exists()  # no session was started


def last_json_line(stdout: str) -> dict:
    return json.loads(stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    ("args", "env", "words"),
    [
        (["-p", "  "], {}, "-p needs a prompt"),
        (["-p", "hi"], {"ANTHROPIC_API_KEY": None}, "ANTHROPIC_API_KEY"),
        (["-p", "hi", "--reasoning", "max"], {}, "--reasoning"),
        (["-p", "hi", "--max-tool-calls", "lots"], {}, "--max-tool-calls"),
        (["-p", "hi", "--no-such-flag"], {}, "--no-such-flag"),
    ],
)
def test_json_output_ends_with_a_result_even_for_a_usage_error(caretz, server, args, env, words):
    run = caretz(*args, "--output", "json", env=env)

    assert run.code == 2
    result = last_json_line(run.stdout)
    assert result["type"] == "result" and result["exit_code"] == 2
    assert result["status"] == "usage_error" and words in result["message"]
    assert result["session_id"] is None and result["cost_usd"] is None
    assert words in run.stderr and "Traceback" not in run.stderr
    assert server.requests == []


def test_json_output_given_as_one_word_is_seen_too(caretz):
    run = caretz("-p", "hi", "--bogus", "--output=json")

    assert run.code == 2 and last_json_line(run.stdout)["status"] == "usage_error"


@pytest.mark.parametrize(
    ("profile", "key", "expected"),
    [
        ({"maxTokens": True}, "profiles.general.maxTokens", "expected a whole number, not true"),
        ({"maxTokens": 1.5}, "profiles.general.maxTokens", "expected a whole number, not 1.5"),
        (
            {"contextWindow": "200000"},
            "profiles.general.contextWindow",
            'expected a whole number, not "200000"',
        ),
        (
            {"loopGuard": {"detectors": {"streamText": {"enabled": "yes"}}}},
            "profiles.general.loopGuard.detectors.streamText.enabled",
            'expected true or false, not "yes"',
        ),
        (
            {"loopGuard": {"detectors": {"repeatedError": {"enabled": 0}}}},
            "profiles.general.loopGuard.detectors.repeatedError.enabled",
            "expected true or false, not 0",
        ),
        ({"maxBudgetUsd": "5"}, "profiles.general.maxBudgetUsd", 'expected a number, not "5"'),
        ({"systemPrompt": 5}, "profiles.general.systemPrompt", "expected a string, not 5"),
    ],
)
def test_profile_values_must_have_the_type_they_say(caretz, server, profile, key, expected):
    path = caretz.write_config({"profiles": {"general": profile}})

    run = caretz("-p", "hi")

    assert run.code == 2
    assert one_line(run.stderr) == f"caretz: {path}: {key}: {expected}"
    assert server.requests == []


def test_prices_are_numbers(caretz):
    path = caretz.write_config({"prices": {"anthropic/claude-test": {"input": "3", "output": 15}}})

    run = caretz("config", "show")

    assert run.code == 2
    assert one_line(run.stderr) == (
        f'caretz: {path}: prices["anthropic/claude-test"].input: expected a number, not "3"'
    )


@pytest.mark.parametrize("timeout", ["120s", 120, 90.5, "2m", "500ms"])
def test_durations_take_a_number_of_seconds_or_a_unit(caretz, timeout):
    caretz.write_config(
        {"profiles": {"general": {"bashTimeout": timeout, "loopGuard": {"judgeTimeout": timeout}}}}
    )

    run = caretz("config", "show")

    assert run.code == 0, run.stderr


@pytest.mark.parametrize("where", ["a file", "below a file", "in /proc"])
def test_a_data_dir_caretz_cannot_write_is_one_line(caretz, server, tmp_path, where):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file")
    data_dir = {
        "a file": blocker,
        "below a file": blocker / "data",
        "in /proc": "/proc/caretz-data",  # procfs refuses new folders, even to root
    }[where]

    run = caretz("-p", "hi", env={"CARETZ_DATA_DIR": str(data_dir)})

    assert run.code == 2
    line = one_line(run.stderr)
    assert str(data_dir) in line and "CARETZ_DATA_DIR" in line
    assert server.requests == []


def test_listing_sessions_in_a_data_dir_that_is_a_file_says_so(caretz, tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file")

    for args in (["sessions", "list"], ["sessions", "show", "any"]):
        run = caretz(*args, env={"CARETZ_DATA_DIR": str(blocker)})
        assert run.code == 2
        assert "is a file" in one_line(run.stderr)


def test_a_subcommand_usage_error_writes_no_run_result(caretz):
    run = caretz("guard", "replay", "--output", "json")  # FILE is missing

    assert run.code == 2 and run.stdout == ""


@pytest.mark.parametrize("args", [("sessions", "list"), ("config", "show"), ("--help",)])
def test_a_reader_that_stops_early_is_no_failure(caretz, args):
    """`caretz sessions list | head -1`: stdout's reader is gone before caretz writes (its
    end of the pipe closed first, so every write meets EPIPE), which ends quietly with 0."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "caretz", *args],
            cwd=caretz.workspace,
            env=caretz.environment(),
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (0, "")


# --- Bad input from a model, a server, an MCP server, a page, a hook: a result, never a
# crash. Each run ends with its Turn.Ended, and with --output json with its result object,
# and its log is valid JSON in UTF-8 line by line.


def no_constant(name: str) -> None:
    raise AssertionError(f"{name} in the log: no JSON has it")


def ended_whole(caretz: Caretz, run: Run, code: int) -> list[dict[str, Any]]:
    """The run ended with `code`, its Turn.Ended and (--output json) its result object;
    its log's events, every line read strictly."""
    assert run.code == code, run.stderr
    assert "Traceback" not in run.stderr
    result = last_json_line(run.stdout)
    assert result["type"] == "result" and result["exit_code"] == code
    raw = (caretz.data_dir / "sessions" / result["session_id"] / "events.jsonl").read_bytes()
    events = [json.loads(line, parse_constant=no_constant) for line in raw.decode().splitlines()]
    assert events[-1]["type"] in ("Turn.Ended", "Checkpoint.Settled")
    assert any(event["type"] == "Turn.Ended" for event in events)
    return events


def results(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [event for event in events if event["type"] == "Tool.Result"]


def sent_results(message: dict[str, Any]) -> list[str]:
    """The texts of the tool results a user message sent back (Anthropic's blocks)."""
    blocks = [b for b in message["content"] if b.get("type") == "tool_result"]
    contents = [block.get("content", "") for block in blocks]
    return [c if isinstance(c, str) else "".join(b.get("text", "") for b in c) for c in contents]


def sent_result(message: dict[str, Any]) -> str:
    [text_of] = sent_results(message)
    return text_of


DEEP_ARRAYS = '{"command": ' + "[" * 2500 + "]" * 2500 + "}"
DEEP_OBJECTS = '{"command": "ls", "x": ' + '{"a": ' * 2500 + "1" + "}" * 2500 + "}"


BAD_ARGUMENTS = [
    ('{"command": "echo \\ud800"}', "lone surrogate (\\ud800)"),  # high, alone
    ('{"command": "echo \\udfff tail"}', "lone surrogate (\\udfff)"),  # low, alone
    ('{"\\udc80": "key"}', "lone surrogate (\\udc80)"),  # in a key
    ('{"command": "echo \\ude00\\ud83d"}', "lone surrogate (\\ude00)"),  # a pair reversed
    (DEEP_ARRAYS, "nested deeper than 100 levels"),
    (DEEP_OBJECTS, "nested deeper than 100 levels"),
    ('{"command": NaN}', "NaN is not a JSON number"),
    ('{"command": "ls", "timeout": -Infinity}', "-Infinity is not a JSON number"),
    ('{"command": "ls", "timeout": 1e999}', "a number JSON cannot carry"),
    ('{"command": "ls", "timeout": ' + "9" * 5000 + "}", "a number too long to read"),
    ('{"command": "ls", "command": "touch x"}', "the key 'command' is given twice"),
    ('{"command": 5}', "argument 'command' must be a string"),
    ('{"command": ["ls"]}', "argument 'command' must be a string"),
    ('"ls"', "must be a JSON object, not str"),
    # (the raw arguments a model sends, what the failed result says), one call each
]


def test_tool_arguments_no_tool_can_take_are_failed_results(caretz, server, workspace):
    raws = [raw for raw, _ in BAD_ARGUMENTS]
    server.add(Reply(tool_calls=[("bash", {})] * len(raws), raw_arguments=raws))
    server.add(text("Understood."))

    run = caretz("-p", "list the files", "--output", "json", "--loop-guard", "off")

    events = ended_whole(caretz, run, 0)
    said = [result["output"] for result in results(events)]
    missing = [
        words for (_, words), output in zip(BAD_ARGUMENTS, said, strict=True) if words not in output
    ]
    assert missing == [] and not any(result["ok"] for result in results(events))
    assert "Understood." in last_json_line(run.stdout)["text"]
    sent = sent_results(server.requests[1].messages[-1])
    assert all(words in text_of for (_, words), text_of in zip(BAD_ARGUMENTS, sent, strict=True))
    assert not (workspace / "x").exists()  # the key given twice ran neither command


def test_a_huge_argument_is_cut_at_the_output_limit_and_not_run(caretz, server, workspace):
    huge = json.dumps({"path": "big.txt", "content": "x" * 3_000_000})
    server.add(Reply(tool_calls=[("write", {})], raw_arguments=huge, chunk_size=65536))
    server.add(text("I will write it in pieces."))
    caretz.write_config({"profiles": {"general": {"maxTokens": 2000}}})

    run = caretz("-p", "write a big file", "--output", "json")

    events = ended_whole(caretz, run, 0)
    [limit] = [e for e in events if e["type"] == "Model.OutputLimit"]
    assert limit["action"] == "calls_not_run" and limit["tool_calls"] == ["write"]
    assert "2,000-token output limit" in sent_result(server.requests[1].messages[-1])
    assert not (workspace / "big.txt").exists()
    assert len(json.dumps(events)) < 1_000_000  # what was read stopped at the bound


def test_a_reply_streaming_without_end_stops_at_its_output_limit(caretz, server):
    caretz.write_config({"profiles": {"general": {"maxTokens": 1000}}})
    # A text loop is cut on its own; the bound holds with the cut off, for text that is none.
    off = '{"detectors": {"streamText": {"enabled": false}}}'
    for _ in range(3):  # the reply, and the two continuations a cut-off answer gets
        server.add(Reply(text="all work and no play " * 5, endless_text=True))

    run = caretz("-p", "tell me a story", "--output", "json", "--loop-guard-config", off)

    events = ended_whole(caretz, run, 4)
    replies = [e for e in events if e["type"] == "Model.Response"]
    assert len(replies) == 3 and all(e["stop_reason"] == "max_tokens" for e in replies)
    bound = 1000 * 16 + 64 * 1024
    assert all(len(e["message"]["content"]) <= bound + 200 for e in replies)
    assert "output limit" in last_json_line(run.stdout)["message"]


@pytest.mark.parametrize(
    "line",
    [b"data: this is no JSON at all\n\n", b"data: [1, 2, 3]\n\n", b'data: {"a": NaN}\n\n'],
)
def test_a_line_that_is_no_json_mid_stream_is_one_line_and_the_run_still_ends(caretz, server, line):
    server.add(Reply(text="partial answer that goes on", raw_before_event=(4, line)))

    run = caretz("-p", "hi", "--output", "json")

    events = ended_whole(caretz, run, 1)
    [error] = [e for e in events if e["type"] == "Provider.Error"]
    assert "malformed chunk" in error["error"]
    assert "malformed chunk" in last_json_line(run.stdout)["message"]
    assert len(run.stderr.strip().splitlines()) <= 3


@pytest.mark.parametrize(
    ("event", "said"),
    [
        (
            {"type": "content_block_start", "index": [1], "content_block": {"type": "tool_use"}},
            "malformed event",
        ),
        ({"type": "message_start", "message": ["not", "an", "object"]}, "malformed event"),
        ({"type": "content_block_delta", "index": 0, "delta": "text"}, "malformed event"),
    ],
)
def test_an_event_with_the_wrong_types_is_one_line(caretz, server, event, said):
    raw = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
    server.add(Reply(text="answer", raw_before_event=(3, raw)))

    run = caretz("-p", "hi", "--output", "json")

    events = ended_whole(caretz, run, 1)
    assert said in last_json_line(run.stdout)["message"]
    assert any(e["type"] == "Provider.Error" for e in events)


def test_text_with_a_lone_surrogate_streams_as_valid_unicode(caretz, server):
    server.add(text("half a pair: \ud83d, a low one: \udc00, done"))

    run = caretz("-p", "hi", "--output", "json")

    ended_whole(caretz, run, 0)
    assert last_json_line(run.stdout)["text"] == "half a pair: \ufffd, a low one: \ufffd, done"


def test_an_mcp_server_that_answers_garbage_fails_each_call_and_the_run_goes_on(caretz, server):
    garbage = {"command": sys.executable, "args": [str(GARBAGE)], "startupTimeout": "10m"}
    caretz.write_config(
        {
            "profiles": {
                "general": {
                    "mcpServers": {"garbage": garbage},
                    "permissions": {"allow": ["mcp__garbage__say"]},
                }
            }
        }
    )
    kinds = ["surrogate", "nan", "deep", "wrong_types", "huge", "not_json"]
    server.add(calls(*[("mcp__garbage__say", {"kind": kind}) for kind in kinds]), text("Noted."))

    run = caretz("-p", "ask the server", "--output", "json", "--loop-guard", "off")

    events = ended_whole(caretz, run, 0)
    said = [result["output"] for result in results(events)]
    ok = [result["ok"] for result in results(events)]
    assert len(said) == len(kinds) and ok == [True, False, False, False, False, False]
    assert said[0] == "lone \ufffd surrogate"  # outside text: a lone surrogate replaced
    assert "NaN is not a JSON number" in said[1]
    assert "cannot read" in said[2] and "cannot read" in said[3]
    assert "mcp.maxResultChars" in said[4]
    assert "cannot read" in said[5]


def test_mcp_servers_whose_tool_lists_are_garbage_are_one_line_each(caretz, server):
    said = {
        "deep": "message is nested deeper than 100 levels",  # as caretz reads each message
        "nested": "message is nested deeper than 100 levels",
    }
    kinds = [*said, "surrogate"]  # outside text: a lone surrogate is replaced, the server kept
    servers = {
        kind: {"command": sys.executable, "args": [str(GARBAGE), kind], "startupTimeout": "10m"}
        for kind in kinds
    }
    caretz.write_config({"profiles": {"general": {"mcpServers": servers}}})
    # Each call waits for its server to start or fail (the run does not otherwise).
    server.add(calls(*[(f"mcp__{kind}__say", {"kind": "nan"}) for kind in kinds]), text("Hello."))

    run = caretz("-p", "hi", "--output", "json")

    events = ended_whole(caretz, run, 0)
    failed = {e["server"]: e["reason"] for e in events if e["type"] == "Mcp.ServerFailed"}
    assert set(failed) == set(said)
    assert all(said[kind] in failed[kind] and "\n" not in failed[kind] for kind in said)
    offered = {tool["name"]: tool for tool in server.requests[1].body["tools"]}
    assert offered["mcp__surrogate__odd"]["description"].startswith("a lone \ufffd surrogate")
    assert not [name for name in offered if name.startswith(("mcp__deep__", "mcp__nested__"))]


def test_hooks_that_print_garbage_leave_the_run_whole(caretz, server, workspace):
    printf = "printf '\\377\\376 not utf-8 \\200\\n'"
    deep = 'python3 -c \'print("{\\"a\\": " * 5000 + "1" + "}" * 5000)\''
    doubled = 'echo \'{"decision": "block", "decision": "approve", "reason": "\\ud800"}\''
    nan = 'echo \'{"hookSpecificOutput": {"updatedInput": {"command": NaN}}}\''
    hooks = {
        "UserPromptSubmit": [hooks_entry(printf)],
        "PreToolUse": [hooks_entry(deep), hooks_entry(nan)],
        "PostToolUse": [hooks_entry(doubled)],
    }
    caretz.write_config({"profiles": {"general": {"hooks": hooks}}})
    server.add(tool("bash", command="echo ran"), text("Done."))

    run = caretz("-p", "go", "--output", "json")

    events = ended_whole(caretz, run, 0)
    [result] = results(events)
    assert result["ok"] and result["output"] == "ran"  # none of the garbage decided anything
    prompt = json.dumps(server.requests[0].messages, ensure_ascii=False)
    assert "\ufffd\ufffd not utf-8 \ufffd" in prompt


def test_a_page_that_redirects_to_no_url_is_a_failed_fetch(caretz, server):
    with WebServer() as web:
        web.routes["/moved"] = Route(status=302, headers={"Location": "http:foo"})
        web.routes["/odd"] = Route(status=301, headers={"Location": "http://xn--/"})
        web.routes["/deep"] = Route(b"<div>" * 3000 + b"deep text" + b"</div>" * 3000)
        caretz.write_config(
            {"profiles": {"general": {"permissions": {"allow": ["WebFetch(domain:127.0.0.1)"]}}}}
        )
        server.add(
            calls(
                ("web_fetch", {"url": web.url("/moved")}),
                ("web_fetch", {"url": web.url("/odd")}),
                ("web_fetch", {"url": web.url("/deep")}),
                ("web_fetch", {"url": "http://127.0.0.1:99999/"}),
            ),
            text("Done."),
        )

        run = caretz("-p", "read them", "--output", "json", "--loop-guard", "off")

    events = ended_whole(caretz, run, 0)
    moved, odd, deep, port = results(events)
    assert not moved["ok"] and "could not be fetched" in moved["output"]
    assert not odd["ok"] and "could not be fetched" in odd["output"]
    assert deep["ok"] and "deep text" in deep["output"]
    assert not port["ok"] and "names a port no host has" in port["output"]
