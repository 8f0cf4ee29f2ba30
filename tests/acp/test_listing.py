"""A session goes by one title in every list of sessions: `caretz sessions list`,
`/sessions` and an editor's `session/list`."""

from __future__ import annotations

import json
from pathlib import Path

from caretz.acp.listing import session_list
from caretz.session.store import SessionStore
from caretz.ui.sessions_text import list_line, prompt_preview


def test_every_list_of_sessions_gives_it_the_same_title(tmp_path: Path):
    folder = tmp_path / "data" / "sessions" / "20261207-101010-abcd"
    folder.mkdir(parents=True)
    project = tmp_path / "project"
    lines = [
        {"type": "Session.Started", "ts": 1.0, "session_id": folder.name, "model": "a/m",
         "cwd": str(project), "project": str(project)},
        {"type": "Turn.Started", "ts": 2.0, "turn": 1, "prompt": "make the\nbuild green"},
        {"type": "Turn.Started", "ts": 3.0, "turn": 2, "prompt": "and now the docs"},
    ]  # fmt: skip
    (folder / "events.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))

    info = SessionStore(tmp_path / "data").info(folder.name)
    listed = session_list(tmp_path / "data", None).sessions

    assert info.title == "make the\nbuild green"
    assert prompt_preview(info) == "make the build green"  # /sessions
    assert list_line(info).endswith("  make the build green")  # caretz sessions list
    assert [entry.title for entry in listed] == ["make the build green"]  # session/list
