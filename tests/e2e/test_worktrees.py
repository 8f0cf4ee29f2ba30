"""`caretz --worktree NAME` end to end: real git, the real CLI, a scripted model: the
session works in its own checkout, -c finds it there, its checkpoints rewind it, and
`caretz worktree list / remove` tidy up."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.checkpoints.helpers import git, require_git, write
from tests.e2e.conftest import Caretz
from tests.modelserver import text, tool


def a_repository(folder: Path) -> Path:
    require_git()
    write(folder, "README.md", "# shop\n")
    write(folder, "src/app.py", "VERSION = 1\n")
    git(folder, "init", "-q", "-b", "main")
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "first")
    return folder


def test_a_session_in_its_worktree_carries_on_rewinds_and_is_removed(server, workspace):
    repo = a_repository(workspace)
    caretz = Caretz(server, repo / "src")  # started in a subfolder: the worktree's own
    tree = repo / ".caretz" / "worktrees" / "feat"
    server.add(
        tool("read", path="app.py"),
        tool("write", path="app.py", content="VERSION = 2\n"),
        text("Bumped it."),
    )

    run = caretz("-w", "feat", "-p", "bump the version")

    assert run.code == 0, run.stderr
    assert f"caretz: worktree {tree} on branch caretz/feat (made from HEAD)" in run.stderr
    assert (tree / "src" / "app.py").read_text() == "VERSION = 2\n"
    assert (repo / "src" / "app.py").read_text() == "VERSION = 1\n"  # the checkout is untouched
    assert git(tree, "rev-parse", "--abbrev-ref", "HEAD").strip() == "caretz/feat"
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""  # not listed
    started = caretz.events(run.session_id)[0]
    assert (started["cwd"], started["project"]) == (str(tree / "src"), str(tree))

    server.add(text("It is 2 now."))
    again = caretz("-w", "feat", "-c", "-p", "what is the version?")

    assert again.code == 0, again.stderr
    assert again.session_id == run.session_id  # -c found the worktree's session
    assert "(already there)" in again.stderr
    assert "bump the version" in str(server.requests[-1].messages)

    rewound = caretz("-w", "feat", "rewind", "--turn", "1", "--files-only")

    assert rewound.code == 0, rewound.stderr
    assert (tree / "src" / "app.py").read_text() == "VERSION = 1\n"
    listed = caretz("worktree", "list")
    assert listed.stdout == f"feat  caretz/feat  clean  1 session  {tree}\n"

    (tree / "notes.txt").write_text("keep me?\n")
    refused = caretz("worktree", "remove", "feat")

    assert refused.code == 1
    assert refused.stderr == (
        "caretz: worktree feat has uncommitted changes (1 file: notes.txt): commit them, "
        "or remove it with --force to discard them\n"
    )
    assert (tree / "notes.txt").exists()

    removed = caretz("worktree", "remove", "feat", "--force")

    assert removed.code == 0, removed.stderr
    assert removed.stdout == "removed worktree feat and its branch caretz/feat\n"
    assert not tree.exists()
    assert git(repo, "branch", "--list", "caretz/feat") == ""
    assert caretz("worktree", "list").stdout == (
        f"no caretz worktrees in {repo} (caretz -w NAME makes one)\n"
    )


def test_a_worktree_needs_a_repository_with_a_commit_and_a_name_git_takes(
    caretz: Caretz, server, workspace
):
    outside = caretz("-w", "feat", "-p", "hello")
    assert outside.code == 2
    assert outside.stderr == (
        f"caretz: {workspace} is not in a git repository: worktrees need one\n"
    )
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    empty = caretz("-w", "feat", "-p", "hello")
    assert empty.code == 2
    assert empty.stderr == (
        f"caretz: {workspace} has no commit yet: a worktree starts from HEAD, so commit first\n"
    )
    named = caretz("-w", "../up", "-p", "hello", "--output", "json")
    assert named.code == 2 and named.stderr.startswith("caretz: worktree name '../up': use")
    assert '"status": "usage_error"' in named.stdout
    assert server.requests == []


def test_the_repositorys_exclude_file_is_never_followed_out_of_its_git_dir(
    server, workspace, tmp_path
):
    repo = a_repository(workspace / "shop")
    elsewhere = tmp_path / "profile.sh"
    elsewhere.write_text("export KEEP=1\n")
    exclude = repo / ".git" / "info" / "exclude"
    exclude.unlink(missing_ok=True)
    exclude.symlink_to(elsewhere)

    run = Caretz(server, repo)("-w", "feat", "-p", "hi")

    assert run.code == 2
    assert run.stderr.startswith(f"caretz: not reading {exclude}: "), run.stderr
    assert server.requests == []
    assert elsewhere.read_text() == "export KEEP=1\n"  # nothing appended through the link
    assert not (repo / ".caretz" / "worktrees" / "feat").exists()
