"""Sessions written before the events were typed (tests/data/sessions-v1/, by the caretz of
commit e1f3c13) resume, show and replay through today's CLI as they did then."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import Caretz
from tests.modelserver import ModelServer, RecordedRequest, text

V1 = Path(__file__).resolve().parents[1] / "data" / "sessions-v1"
NAMES = sorted(path.name for path in V1.iterdir() if (path / "events.jsonl").is_file())


def started(name: str) -> dict:
    """The fixture's Session.Started line."""
    with (V1 / name / "events.jsonl").open(encoding="utf-8") as log:
        return json.loads(log.readline())


def install(caretz: Caretz, name: str, workspace: Path | None = None) -> str:
    """Copy the fixture into this test's data dir; with `workspace`, as a session of that
    folder (its recorded folder replaced), so `--continue` finds it there. Its ID."""
    first = started(name)
    text_of_log = (V1 / name / "events.jsonl").read_text(encoding="utf-8")
    if workspace is not None:
        text_of_log = text_of_log.replace(first["cwd"], str(workspace))
    folder = caretz.data_dir / "sessions" / first["session_id"]
    folder.mkdir(parents=True)
    (folder / "events.jsonl").write_text(text_of_log, encoding="utf-8")
    return first["session_id"]


def said(request: RecordedRequest) -> list[str]:
    """Every text a request's messages carry, tool results included, in order."""
    texts = []
    for message in request.messages:
        content = message["content"]
        if isinstance(content, str):
            texts.append(content)
            continue
        for block in content:
            inner = block.get("text") or block.get("content") or ""
            if isinstance(inner, list):
                inner = "".join(part.get("text", "") for part in inner)
            texts.append(inner)
    return texts


@pytest.mark.parametrize("name", NAMES)
def test_sessions_show_prints_what_it_printed_then(caretz: Caretz, name: str):
    session_id = install(caretz, name)

    shown = caretz("sessions", "show", session_id)

    assert shown.code == 0, shown.stderr
    assert shown.stdout == (V1 / name / "sessions-show.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", NAMES)
def test_guard_replay_prints_what_it_printed_then(caretz: Caretz, name: str):
    session_id = install(caretz, name)
    events = caretz.data_dir / "sessions" / session_id / "events.jsonl"

    replayed = caretz("guard", "replay", str(events))

    expected_code = int((V1 / name / "guard-replay.code").read_text())
    assert replayed.code == expected_code, replayed.stderr
    assert replayed.stdout == (V1 / name / "guard-replay.txt").read_text(encoding="utf-8")


def test_resume_by_id_sends_the_old_conversation_with_its_tool_calls(
    caretz: Caretz, server: ModelServer
):
    session_id = install(caretz, "tool_turn")
    server.add(text("Still hello, world."))

    run = caretz("-p", "and now?", "--resume", session_id)

    assert run.code == 0, run.stderr
    (request,) = server.requests
    texts = said(request)
    assert texts[0] == "make app.py greet the world"
    assert "what does it print now?" in texts and "It prints hello, world." in texts
    assert any("[exit code 3]" in each for each in texts)  # the failed bash call's result
    assert texts[-1] == "and now?"
    assert len([m for m in request.messages if m["role"] == "assistant"]) == 7
    assert "resuming session" in run.stderr and "another folder" in run.stderr


def test_continue_finds_the_old_session_of_this_folder(
    caretz: Caretz, server: ModelServer, workspace: Path
):
    session_id = install(caretz, "provider_retry", workspace)
    server.add(text("Yes."))

    run = caretz("-c", "-p", "sure?")

    assert run.code == 0, run.stderr
    assert run.session_id == session_id
    # The retried reply's discarded start is not part of the conversation.
    assert said(server.requests[0]) == ["what is the answer?", "The answer is 42.", "sure?"]


def test_a_rewound_session_resumes_from_the_rewound_conversation(
    caretz: Caretz, server: ModelServer, workspace: Path
):
    install(caretz, "checkpoint_rewind", workspace)
    server.add(text("Here."))

    run = caretz("-c", "-p", "and the files?")

    assert run.code == 0, run.stderr
    texts = said(server.requests[0])
    assert texts == ["where are we?", "Back to the start.", "and the files?"]


def test_a_compacted_session_resumes_from_its_summary(
    caretz: Caretz, server: ModelServer, workspace: Path
):
    install(caretz, "compaction", workspace)
    server.add(text("Done before."))

    run = caretz("-c", "-p", "anything left?")

    assert run.code == 0, run.stderr
    texts = said(server.requests[0])
    assert "SUMMARY: printed A's" in texts[0]
    assert not any("A" * 100 in each for each in texts)  # summarized away, as then
    assert any("B" * 100 in each for each in texts) and texts[-1] == "anything left?"


def test_a_fresh_json_run_prints_each_event_as_its_log_line(caretz: Caretz, server: ModelServer):
    """--output json prints the dict each log line holds, byte for byte (as the v1 fixture's
    output.jsonl shows it did before)."""
    server.add(text("Hi."))

    run = caretz("-p", "hello", "--output", "json")

    assert run.code == 0, run.stderr
    printed = run.stdout.splitlines()
    session_id = json.loads(printed[-1])["session_id"]
    logged = (caretz.data_dir / "sessions" / session_id / "events.jsonl").read_text().splitlines()
    assert printed[:-1] == logged
