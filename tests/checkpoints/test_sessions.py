"""Checkpoints per session: listed from the shadow repository alone, found by turn or id."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from caretz.checkpoints import CheckpointStore, SnapshotLimits, UnknownCheckpoint
from caretz.checkpoints.events import created_record, restored_record
from caretz.checkpoints.store import project_folder
from tests.checkpoints.helpers import meta, write

LIST_IN_A_NEW_PROCESS = """
import json, sys
from pathlib import Path
from caretz.checkpoints import CheckpointStore
store = CheckpointStore.open(Path(sys.argv[1]), Path(sys.argv[2]))
print(json.dumps([
    {"turn": cp.turn, "kind": cp.kind, "prompt": cp.prompt, "id": cp.id,
     "turn_changed": cp.turn_changed}
    for cp in store.list(sys.argv[3])
]))
"""


def two_turns(store: CheckpointStore, project: Path, session: str = "s1") -> list:
    first = store.checkpoint(meta(1, "add a greeting\nwith details", session=session))
    write(project, "hello.txt", "hello\n")
    store.settle(meta(1, session=session))
    second = store.checkpoint(meta(2, "remove the readme", session=session))
    (project / "README.md").unlink()
    store.settle(meta(2, session=session))
    return [first, second]


def test_a_resumed_session_lists_its_checkpoints_from_the_shadow_repo(
    plain_project, open_store, data_dir
):
    taken = two_turns(open_store(plain_project), plain_project)

    done = subprocess.run(
        [sys.executable, "-c", LIST_IN_A_NEW_PROCESS, str(data_dir), str(plain_project), "s1"],
        capture_output=True,
        text=True,
        check=True,
    )

    listed = json.loads(done.stdout)
    assert [(c["turn"], c["kind"], c["prompt"]) for c in listed] == [
        (1, "turn", "add a greeting"),
        (2, "turn", "remove the readme"),
    ]
    assert [c["id"] for c in listed] == [cp.id for cp in taken]
    assert [c["turn_changed"] for c in listed] == [["hello.txt"], ["README.md"]]


def test_checkpoints_are_found_by_turn_and_by_id_prefix(plain_project, open_store):
    store = open_store(plain_project)
    first, second = two_turns(store, plain_project)

    assert store.for_turn("s1", 2) == second
    assert store.get(first.id[:8]) == first
    assert store.get(second.short_id, session="s1") == second
    assert store.last_turn("s1") == second
    with pytest.raises(
        UnknownCheckpoint, match=r"no checkpoint for turn 7 of session s1 \(turns with one: 1, 2\)"
    ):
        store.for_turn("s1", 7)
    with pytest.raises(UnknownCheckpoint, match="no checkpoint 'ffffffff'"):
        store.get("ffffffff")
    with pytest.raises(UnknownCheckpoint, match="session nobody has no checkpoints"):
        store.last_turn("nobody")


def test_sessions_are_kept_apart_and_odd_names_work(plain_project, open_store):
    store = open_store(plain_project)
    odd = "session with spaces/and..slashes.lock"
    two_turns(store, plain_project, session="20250101-120000-ab12")
    store.checkpoint(meta(1, session=odd))

    assert store.sessions() == ["20250101-120000-ab12", odd]
    assert [cp.session for cp in store.list(odd)] == [odd]
    assert len(store.list("20250101-120000-ab12")) == 2
    assert store.list("never-ran") == []


def test_one_shadow_repository_per_resolved_project_path(tmp_path, plain_project, data_dir):
    link = tmp_path / "link-to-plain"
    os.symlink(plain_project, link)
    assert project_folder(data_dir, link) == project_folder(data_dir, plain_project)
    other = tmp_path / "other"
    other.mkdir()
    assert project_folder(data_dir, other) != project_folder(data_dir, plain_project)
    assert project_folder(data_dir, plain_project).parent == data_dir / "checkpoints"


def test_dropping_sessions_and_compacting_frees_disk(plain_project, open_store, clock):
    for number in range(40):
        write(plain_project, f"blobs/{number}.txt", os.urandom(20_000).hex())
    store = open_store(plain_project)
    two_turns(store, plain_project, session="old")
    store.compact()
    used = store.disk_usage()
    for number in range(40):
        (plain_project / f"blobs/{number}.txt").unlink()
    clock.now += 10 * 86400
    store.checkpoint(meta(1, session="new"))

    dropped = store.prune(older_than=86400)

    assert dropped == ["old"]
    assert store.sessions() == ["new"]
    assert store.disk_usage() < used / 2
    with pytest.raises(UnknownCheckpoint):
        store.drop_session("old")


def test_event_fields_name_what_the_log_needs(plain_project, open_store):
    store = open_store(plain_project)
    checkpoint, _ = two_turns(store, plain_project)
    result = store.restore(checkpoint, meta(3))

    created = created_record(result.before, str(plain_project)).to_dict()
    restored = restored_record("both", checkpoint, result).to_dict()
    conversation_only = restored_record("conversation", checkpoint).to_dict()

    assert created["kind"] == "rewind" and created["id"] == result.before.id
    assert created["changed"] == ["README.md"] and "note" not in created  # a rewind's has none
    assert restored["to"] == checkpoint.id and restored["to_turn"] == 1
    assert restored["before"] == result.before.id
    assert sorted((c["path"], c["status"]) for c in restored["changes"]) == [
        ("README.md", "added"),
        ("hello.txt", "deleted"),
    ]
    assert conversation_only == {
        "type": "Checkpoint.Restored",
        "ts": None,
        "scope": "conversation",
        "to": checkpoint.id,
        "to_turn": 1,
        "to_session": "s1",
        "paths": None,
    }
    json.dumps([created, restored])


def test_notices_name_the_undo_command_and_what_was_left_out(plain_project, open_store):
    from caretz.checkpoints.notices import conflict_lines, left_out_note, rewind_command

    write(plain_project, "big.bin", "x" * 3000)
    store = open_store(plain_project, limits=SnapshotLimits(size_cap=1024))
    checkpoint = store.checkpoint(meta(3, session="20250611-142233-9f3a"))
    write(plain_project, "README.md", "the user\n")
    store.settle(meta(3, session="20250611-142233-9f3a"))
    write(plain_project, "src/app.py", "the user again\n")

    assert (
        rewind_command(checkpoint.session, checkpoint.turn)
        == "caretz rewind 20250611-142233-9f3a --turn 3 --files-only"
    )
    assert (
        left_out_note(checkpoint)
        == f"checkpoint {checkpoint.short_id} left out 1: big.bin (0.0 MB)"
    )
    assert conflict_lines(store.preview(checkpoint).conflicts) == [
        "  src/app.py: changed outside caretz since the checkpoint"
    ]
