"""A later snapshot is one `git status` over the shadow index's stat data and untracked
cache (checkpoints/scan.py), over the paths inotify saw change (checkpoints/watch.py), or
over the files caretz's tools named: what each sees once
those caches are warm, and that a rewind puts back exactly what changed."""

from __future__ import annotations

import pytest

from caretz.checkpoints.scan import StatusEntry, parse
from tests.checkpoints.helpers import meta, tree_state, write


@pytest.mark.parametrize("kind", ["plain", "repository"])
@pytest.mark.parametrize("watch", [True, False], ids=["watched", "whole"])
def test_a_warm_scan_sees_new_folders_deletions_and_a_file_changed_back(
    kind, watch, plain_project, repo_project, open_store
):
    project = plain_project if kind == "plain" else repo_project
    store = open_store(project, watch=watch)
    store.checkpoint(meta(1))
    store.checkpoint(meta(2))  # the caches hold every folder's listing now
    before = tree_state(project)
    target = store.checkpoint(meta(3))
    kept, gone = sorted(p.name for p in (project / "src").iterdir())[:2]
    original = (project / "src" / kept).read_bytes()

    write(project, "src/new/deeper/made.txt", "in a new folder\n")
    write(project, "src/added.txt", "in a folder the cache knows\n")
    (project / "src" / gone).unlink()
    write(project, f"src/{kept}", "changed")
    (project / "src" / kept).write_bytes(original)  # and changed back
    write(project, "src/new/also.log", "ignored in the repository\n")
    later = store.checkpoint(meta(4))

    expected = {"src/added.txt", f"src/{gone}", "src/new/deeper/made.txt"}
    assert set(later.changed) == expected | ({"src/new/also.log"} if kind == "plain" else set())
    store.restore(target, meta(5), force=True)
    left = {"src/new", "src/new/also.log"} if kind == "repository" else set()
    assert {k: v for k, v in tree_state(project).items() if k not in left} == before


def test_a_settle_on_named_files_looks_at_those_alone(plain_project, open_store):
    store = open_store(plain_project)
    target = store.checkpoint(meta(1))
    before = tree_state(plain_project)

    write(plain_project, "src/app.py", "print('the tool wrote this')\n")
    write(plain_project, "src/new/made.py", "X = 1\n")
    write(plain_project, "README.md", "# someone else's edit\n")
    settled = store.settle(meta(1), paths=["src/app.py", "src/new/made.py"])

    assert settled is not None and set(settled.changed) == {"src/app.py", "src/new/made.py"}
    outside = {conflict.path for conflict in store.preview(target).conflicts}
    assert outside == {"README.md"}  # changed after the turn's recorded end
    store.restore(target, meta(2), force=True)
    assert tree_state(plain_project) == before


def test_nothing_to_look_at_is_nothing_changed(plain_project, open_store):
    store = open_store(plain_project)
    target = store.checkpoint(meta(1))
    write(plain_project, "README.md", "# changed, but not by a tool\n")

    settled = store.settle(meta(1), paths=[])

    assert settled is not None and settled.tree == target.tree


def test_status_lines_are_read_by_kind():
    raw = b"\0".join(
        [
            b"1 .M N... 100644 100644 100644 " + b"a" * 40 + b" " + b"b" * 40 + b" src/a b.py",
            b"1 A. N... 000000 100644 100644 " + b"0" * 40 + b" " + b"c" * 40 + b" staged.py",
            b"u UU N... 100644 100644 100644 100644 " + b" ".join([b"d" * 40] * 3) + b" both.py",
            b"? new dir/file.txt",
            b"! ignored.log",
            b"",
        ]
    )
    found = parse(raw)

    assert found.index_moved
    assert found.changed == [
        StatusEntry("src/a b.py", blob="b" * 40),
        StatusEntry("both.py"),
        StatusEntry("new dir/file.txt", untracked=True),
    ]


def test_a_snapshot_staged_but_not_recorded_is_not_mistaken_for_the_last_recorded(
    plain_project, open_store
):
    store = open_store(plain_project)
    store.checkpoint(meta(1))
    write(plain_project, "src/app.py", "print('staged by prepare')\n")
    store.prepare()  # the index holds the change; HEAD still names checkpoint 1's tree

    second = store.checkpoint(meta(2))

    assert second.changed == ("src/app.py",)
    shown = store.git.run("cat-file", "-p", f"{second.tree}:src/app.py")
    assert shown == b"print('staged by prepare')\n"
