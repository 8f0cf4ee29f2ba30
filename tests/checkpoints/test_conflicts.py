"""What a restore would overwrite that changed outside caretz since the checkpoint."""

from __future__ import annotations

import pytest

from caretz.checkpoints import RestoreConflict
from caretz.checkpoints.conflicts import OUTSIDE, UNKNOWN
from tests.checkpoints.helpers import meta, write


def agent_turn_then_user_edit(project, open_store):
    """Turn 1 edits src/app.py; after it, the user edits src/util.py."""
    store = open_store(project)
    checkpoint = store.checkpoint(meta(1))
    write(project, "src/app.py", "the agent's edit\n")
    store.settle(meta(1))
    write(project, "src/util.py", "the user's edit\n")
    return store, checkpoint


def test_caretz_own_changes_are_no_conflict(plain_project, open_store):
    store = open_store(plain_project)
    checkpoint = store.checkpoint(meta(1))
    write(plain_project, "src/app.py", "the agent's edit\n")
    store.settle(meta(1))

    preview = store.preview(checkpoint)

    assert [c.path for c in preview.changes] == ["src/app.py"]
    assert preview.conflicts == ()
    assert (plain_project / "src/app.py").read_text() == "the agent's edit\n"


def test_an_edit_after_the_turn_is_a_conflict_the_restore_refuses(plain_project, open_store):
    store, checkpoint = agent_turn_then_user_edit(plain_project, open_store)

    preview = store.preview(checkpoint)
    with pytest.raises(RestoreConflict) as refused:
        store.restore(checkpoint, meta(2))

    assert [(c.path, c.reason) for c in preview.conflicts] == [("src/util.py", OUTSIDE)]
    assert "src/util.py" in str(refused.value) and "--force" in str(refused.value)
    assert (plain_project / "src/util.py").read_text() == "the user's edit\n"
    assert (plain_project / "src/app.py").read_text() == "the agent's edit\n"
    assert [cp.kind for cp in store.list("s1")] == ["turn"]


def test_confirmed_conflicts_or_force_let_the_restore_through(plain_project, open_store):
    store, checkpoint = agent_turn_then_user_edit(plain_project, open_store)

    result = store.restore(checkpoint, meta(2), allowed=["src/util.py"])

    assert [c.path for c in result.overwritten_conflicts] == ["src/util.py"]
    assert (plain_project / "src/util.py").read_text() == "def util():\n    return 1\n"
    write(plain_project, "README.md", "another edit by the user\n")
    with pytest.raises(RestoreConflict):
        store.restore(result.before, meta(3), allowed=["src/util.py"])
    store.restore(result.before, meta(3), force=True)
    assert (plain_project / "src/util.py").read_text() == "the user's edit\n"


def test_an_edit_between_turns_counts_when_rewinding_past_it(plain_project, open_store):
    store = open_store(plain_project)
    first = store.checkpoint(meta(1))
    write(plain_project, "src/app.py", "turn 1\n")
    store.settle(meta(1))
    write(plain_project, "README.md", "the user, between turns\n")
    second = store.checkpoint(meta(2))
    write(plain_project, "src/app.py", "turn 2\n")
    store.settle(meta(2))

    assert [c.path for c in store.preview(first).conflicts] == ["README.md"]
    assert store.preview(second).conflicts == ()


def test_a_turn_that_never_settled_is_unknown_unless_caretz_wrote_the_file(
    plain_project, open_store
):
    store = open_store(plain_project)
    checkpoint = store.checkpoint(meta(1))
    write(plain_project, "src/app.py", "written by the file tool\n")
    write(plain_project, "made-by-bash.txt", "bash\n")
    # the process was killed: no settle

    preview = store.preview(checkpoint, caretz_paths=[str(plain_project / "src/app.py")])

    assert [(c.path, c.reason) for c in preview.conflicts] == [("made-by-bash.txt", UNKNOWN)]


def test_settle_is_a_no_op_without_a_checkpoint_to_settle(plain_project, open_store):
    store = open_store(plain_project)
    assert store.settle(meta(1)) is None
    store.checkpoint(meta(1))
    assert store.settle(meta(1)) is not None
    write(plain_project, "README.md", "the user\n")
    assert store.settle(meta(2)) is None  # a turn without a checkpoint claims nothing


def test_another_sessions_changes_are_outside_this_one(plain_project, open_store):
    store = open_store(plain_project)
    mine = store.checkpoint(meta(1, session="mine"))
    write(plain_project, "src/app.py", "mine\n")
    store.settle(meta(1, session="mine"))
    store.checkpoint(meta(1, session="theirs"))
    write(plain_project, "src/util.py", "theirs\n")
    store.settle(meta(1, session="theirs"))

    assert [c.path for c in store.preview(mine).conflicts] == ["src/util.py"]
