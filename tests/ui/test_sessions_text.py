"""Past sessions as text, and the one-line previews the views print."""

from __future__ import annotations

from pathlib import Path

from caretz.session.records.parse import parse_record
from caretz.session.store import SessionInfo
from caretz.ui.console import call_preview
from caretz.ui.sessions_text import describe_event, list_line, prompt_preview, started_text


def info(first_prompt: str, started: float = 1_700_000_000.0, **more) -> SessionInfo:
    return SessionInfo(
        id="abc123",
        path=Path("/tmp/abc123"),
        started=started,
        model="openai/m",
        first_prompt=first_prompt,
        turns=2,
        last_status="done",
        **more,
    )


def test_a_long_prompt_is_folded_to_one_line_and_cut_with_an_ellipsis():
    preview = prompt_preview(info("fix   the\ntests " + "x" * 100))

    assert "\n" not in preview and "  " not in preview
    assert len(preview) == 60 and preview.endswith("…") and preview.startswith("fix the tests x")


def test_a_list_line_names_the_session_its_age_folder_model_turns_status_and_title():
    session = info("hello", folder="/src/app", last_prompt="and now?", updated=1_000.0)

    line = list_line(session, now=1_000.0 + 3 * 3600 + 59)

    assert line == "abc123  3h ago  /src/app  openai/m  2 turn(s)  done  hello"
    assert list_line(session, now=1_040.0).startswith("abc123  40s ago  ")
    assert list_line(session, now=1_000.0 + 2 * 86400).startswith("abc123  2d ago  ")


def test_a_session_without_a_start_time_shows_no_date():
    assert started_text(info("hello", started=0)) == ""


def test_a_tool_call_shows_its_arguments_cut_to_120_characters():
    event = {"type": "Tool.Called", "call": {"name": "bash", "arguments": {"command": "y" * 500}}}

    line = describe_event(parse_record(event))

    assert line is not None and line.startswith('  bash {"command": "yyy')
    assert len(line) == len("  bash ") + 120 and line.endswith("…")


def test_events_no_one_reads_are_left_out():
    assert describe_event(parse_record({"type": "Model.Request"})) is None
    assert describe_event(parse_record({"type": "Some.FutureEvent", "x": 1})) is None


def test_a_call_preview_is_one_line_of_at_most_80_characters():
    assert call_preview("bash", {"command": "ls\n  -la"}) == "ls -la"
    long = call_preview("bash", {"command": "echo " + "z" * 200})
    assert len(long) == 80 and long.endswith("…")
    unnamed = call_preview("odd", {"x": "w" * 200})
    assert len(unnamed) == 80 and unnamed.startswith('{"x": "www') and unnamed.endswith("…")


def test_a_result_line_says_how_a_call_ended_and_never_exit_none():
    def line(**fields) -> str | None:
        return describe_event(parse_record({"type": "Tool.Result", "ts": 1.0, **fields}))

    assert line(ok=True, exit_code=0, duration_s=0.1) == "    → ok, 0.1s"
    assert line(ok=False, exit_code=2, duration_s=0.1) == "    → failed (exit 2), 0.1s"
    interrupted = line(ok=False, exit_code=None, ended_by="interrupted", duration_s=3.0)
    assert interrupted == "    → failed (cancelled, process group killed), 3.0s"
    assert line(ok=False, exit_code=None, ended_by="timeout", duration_s=9.0) == (
        "    → failed (timed out), 9.0s"
    )
    assert line(ok=False, exit_code=None, duration_s=0.0) == "    → failed, 0.0s"
