"""The session log's records: every line caretz wrote before they existed reads back as its
record and writes out byte for byte; unknown lines load; the log writes and tells records."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from caretz.session.events import EventLog, read_events
from caretz.session.records.base import Record, UnknownRecord
from caretz.session.records.checkpoints import CheckpointCreated
from caretz.session.records.guard import LoopGuardBlocked
from caretz.session.records.loop import ToolReturned, TurnStarted
from caretz.session.records.parse import RECORD_TYPES, parse_record
from caretz.session.records.session import SessionStarted

V1 = Path(__file__).resolve().parents[1] / "data" / "sessions-v1"
V1_LOGS = sorted(V1.glob("*/events.jsonl"))


def encoded(record: Record) -> str:
    """A record as EventLog writes it (and --output json prints it)."""
    return json.dumps(record.to_dict(), ensure_ascii=False, default=str)


def test_the_v1_sessions_are_all_there():
    assert [path.parent.name for path in V1_LOGS] == sorted(
        [
            "checkpoint_rewind",
            "compaction",
            "goal",
            "hook_run",
            "loop_guard",
            "permission_denial",
            "provider_retry",
            "tool_turn",
        ]
    )


@pytest.mark.parametrize("path", V1_LOGS, ids=lambda path: path.parent.name)
def test_every_v1_line_is_a_known_record_written_back_byte_for_byte(path: Path):
    lines = path.read_text(encoding="utf-8").splitlines()
    records = list(read_events(path))

    assert len(records) == len(lines)
    for line, record in zip(lines, records, strict=True):
        assert not isinstance(record, UnknownRecord), line
        assert type(record) is RECORD_TYPES[record.type]
        assert not record._absent and not record._extra, line  # every key modelled
        assert encoded(record) == line


def test_the_v1_json_output_is_the_log_line_for_line():
    """--output json printed each event as its log line; a record prints the same."""
    printed = (V1 / "tool_turn" / "output.jsonl").read_text(encoding="utf-8").splitlines()
    logged = (V1 / "tool_turn" / "events.jsonl").read_text(encoding="utf-8").splitlines()
    events = printed[:-1]  # then the result object
    assert json.loads(printed[-1])["type"] == "result"
    assert events == logged[: len(events)]
    assert [encoded(parse_record(json.loads(line))) for line in events] == events


def test_the_v1_sessions_hold_every_family_the_fixtures_promise():
    kinds = {record.type for path in V1_LOGS for record in read_events(path)}
    assert {
        "Tool.Result",
        "LoopGuard.Redirected",
        "LoopGuard.Stopped",
        "LoopGuard.Blocked",
        "Goal.Evaluated",
        "Checkpoint.Created",
        "Checkpoint.Restored",
        "Permission.Decided",
        "Hook.Ran",
        "Provider.Retrying",
        "Session.Compacted",
        "Session.Resumed",
    } <= kinds


def test_a_line_of_an_unknown_type_or_of_none_loads_as_it_was(tmp_path: Path):
    lines = [
        {"type": "Future.Thing", "ts": 1.5, "x": [1, 2]},
        {"ts": 2.0, "no": "type"},
        {"type": 7},
    ]
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + '[1]\n{"torn": ')

    records = list(read_events(path))

    assert all(isinstance(record, UnknownRecord) for record in records)
    assert [record.to_dict() for record in records] == lines
    assert [record.type for record in records] == ["Future.Thing", "", ""]


def test_a_newer_key_is_kept_and_an_older_line_without_a_key_is_written_as_it_was():
    newer = {"type": "Turn.Started", "ts": 1.0, "turn": 2, "agent": "main", "prompt": "go",
             "model": "m", "from_user": True, "mood": "calm"}  # fmt: skip
    older = {"type": "Turn.Ended", "ts": 1.0, "turn": 1, "agent": "main", "status": "done",
             "exit_code": 0, "message": "", "text": "ok", "tool_calls": 0}  # fmt: skip

    read_newer, read_older = parse_record(newer), parse_record(older)

    assert isinstance(read_newer, TurnStarted) and read_newer.prompt == "go"
    assert read_newer.to_dict() == newer
    assert not read_older.written("usage") and read_older.to_dict() == older


def test_keys_written_only_when_set():
    started = SessionStarted(session_id="s", cwd="/p", project="/p")
    assert "other_project" not in started.to_dict()
    assert SessionStarted(other_project="/q").to_dict()["other_project"] == "/q"
    result = ToolReturned(index=0, call_id="c", name="bash", ok=True, output="", exit_code=0)
    assert list(result.to_dict())[-3:] == ["exit_code", "duration_s", "diff"]
    rewind = CheckpointCreated(id="a", kind="rewind", note=None).to_dict()
    turn = CheckpointCreated(id="a", kind="turn", note=None).to_dict()
    assert "note" not in rewind and turn["note"] is None


def test_the_disallowed_tools_block_keeps_its_own_key_order():
    by_rule = LoopGuardBlocked(
        detector="disallowed-tools",
        headline="h",
        tool="bash",
        rule="bash",
        pattern="rm",
        reason="r",
    )
    by_guard = LoopGuardBlocked(detector="d", headline="h", step=3, mode="active", reason="r")

    assert list(by_rule.to_dict())[2:] == [
        "detector",
        "headline",
        "tool",
        "rule",
        "pattern",
        "reason",
    ]
    assert list(by_guard.to_dict())[2:] == [
        "detector",
        "headline",
        "step",
        "mode",
        "reason",
        "tool",
    ]


def test_the_log_writes_the_line_and_tells_listeners_the_stamped_record(tmp_path: Path):
    heard: list[Record] = []
    log = EventLog(tmp_path / "events.jsonl", clock=lambda: 12.34567)
    log.subscribe(heard.append)
    record = TurnStarted(turn=1, prompt="héllo ✓", model="m")

    returned = log.emit(record)
    log.close()

    line = (tmp_path / "events.jsonl").read_text(encoding="utf-8")
    assert line == (
        '{"type": "Turn.Started", "ts": 12.346, "turn": 1, "agent": "main", '
        '"prompt": "héllo ✓", "model": "m", "from_user": true}\n'
    )
    assert heard == [returned] and returned.ts == 12.346 and record.ts is None
    assert returned == dataclasses.replace(record, ts=12.346)


def test_records_are_frozen_and_refuse_unknown_fields():
    record = TurnStarted(prompt="x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.prompt = "y"  # type: ignore[misc]
    with pytest.raises(TypeError, match="no field colour"):
        TurnStarted(colour="red")  # type: ignore[call-arg]


def test_every_type_is_named_once_and_parses_to_its_class():
    assert len(RECORD_TYPES) == 59
    for name, kind in RECORD_TYPES.items():
        assert name == kind.TYPE
        assert isinstance(parse_record({"type": name, "ts": 0.0}), kind)
