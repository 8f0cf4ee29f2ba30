"""caretz's own writes into its data dir never follow a symlink planted in their place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from caretz.approvals import ApprovalStore
from caretz.session.events import EventLog
from caretz.session.records.session import SessionStarted


def test_a_symlinked_approvals_store_approves_nothing_and_is_replaced_not_followed(tmp_path: Path):
    data, elsewhere = tmp_path / "data", tmp_path / "elsewhere.json"
    data.mkdir()
    elsewhere.write_text(json.dumps({"/project": {"evil": "d" * 64}}))
    (data / "mcp-approvals.json").symlink_to(elsewhere)
    store = ApprovalStore(data, "mcp-approvals.json")

    assert not store.approved(Path("/project"), "evil", "d" * 64)
    store.approve(Path("/project"), {"good": "g" * 64})

    assert not (data / "mcp-approvals.json").is_symlink()
    assert json.loads(elsewhere.read_text()) == {"/project": {"evil": "d" * 64}}
    assert store.approved(Path("/project"), "good", "g" * 64)


def test_the_session_log_is_not_written_through_a_symlink(tmp_path: Path):
    target = tmp_path / "bashrc"
    target.write_text("# mine\n")
    log_path = tmp_path / "session" / "events.jsonl"
    log_path.parent.mkdir()
    log_path.symlink_to(target)

    with pytest.raises(OSError):
        EventLog(log_path).emit(SessionStarted())
    assert target.read_text() == "# mine\n"
