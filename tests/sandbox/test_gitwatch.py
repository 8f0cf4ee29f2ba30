"""The git watch: what a command creates or changes where git takes configuration or code
from is moved aside or put back after the call, and said in one line."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from caretz.sandbox.gitwatch import GitWatch

GIT = shutil.which("git")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    assert GIT, "git is missing: apt install git"
    root = tmp_path / "project"
    root.mkdir()
    run(root, "init", "-q")
    (root / "README.md").write_text("hello\n")
    run(root, "add", "README.md")
    run(root, "commit", "-qm", "start")
    return root


def run(cwd: Path, *args: str) -> None:
    subprocess.run(
        [str(GIT), "-c", "user.name=u", "-c", "user.email=u@e", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def watch(repo: Path, tmp_path: Path, full: bool) -> GitWatch:
    watching = GitWatch([repo], tmp_path / "quarantine", git=GIT, full=full)
    watching.start()
    return watching


def test_a_created_commondir_is_moved_aside_under_either_backend(repo, tmp_path):
    for full in (False, True):
        watching = watch(repo, tmp_path, full)
        (repo / ".git" / "commondir").write_text("/elsewhere\n")
        (lines,) = watching.check()
        assert lines.startswith(f"{repo}/.git/commondir: created by a command; caretz moved it")
        assert not (repo / ".git" / "commondir").exists()
        assert list((tmp_path / "quarantine").rglob("commondir"))
        assert watching.check() == []


def test_under_landlock_changes_are_put_back_and_new_hooks_moved(repo, tmp_path):
    git_dir = repo / ".git"
    config_before = (git_dir / "config").read_bytes()
    watching = watch(repo, tmp_path, full=True)
    (git_dir / "config").write_text("[core]\n\tfsmonitor = touch /tmp/x\n")
    (git_dir / "info" / "exclude").write_text("*\n")
    (git_dir / "hooks" / "pre-commit").write_text("#!/bin/sh\n")
    sample = next((git_dir / "hooks").glob("*.sample"))
    sample.unlink()

    lines = watching.check()

    assert (git_dir / "config").read_bytes() == config_before
    assert (git_dir / "info" / "exclude").read_text() != "*\n"
    assert not (git_dir / "hooks" / "pre-commit").exists() and sample.exists()
    assert len(lines) == 4 and any("config: changed by a command" in line for line in lines)


def test_under_bwrap_only_creations_are_undone(repo, tmp_path):
    """The rest is read-only to commands there; a change is the user's own."""
    watching = watch(repo, tmp_path, full=False)
    run(repo, "config", "user.name", "me")
    assert watching.check() == []
    assert "me" in (repo / ".git" / "config").read_text()


def test_a_command_the_user_let_out_changes_git_on_purpose(repo, tmp_path):
    watching = watch(repo, tmp_path, full=True)
    (repo / ".git" / "commondir").write_text("/elsewhere\n")
    assert watching.check(accept=True) == []
    assert (repo / ".git" / "commondir").exists()
    assert watching.check() == []


def test_a_nested_repository_linked_into_the_index_is_moved_aside(repo, tmp_path):
    watching = watch(repo, tmp_path, full=False)
    nested = repo / "sub"
    nested.mkdir()
    run(nested, "init", "-q")
    run(nested, "config", "core.fsmonitor", "touch /tmp/planted")
    (nested / "f").write_text("x\n")
    run(nested, "add", "f")
    run(nested, "commit", "-qm", "x")
    run(repo, "add", "sub")

    (line,) = watching.check()

    assert line.startswith(f"{nested}/.git: a nested repository linked into the index")
    assert not (nested / ".git").exists() and (nested / "f").exists()


def test_a_linked_nested_repository_that_was_there_keeps_its_config(repo, tmp_path):
    nested = repo / "vendor"
    nested.mkdir()
    run(nested, "init", "-q")
    (nested / "f").write_text("x\n")
    run(nested, "add", "f")
    run(nested, "commit", "-qm", "x")
    run(repo, "add", "vendor")
    before = (nested / ".git" / "config").read_bytes()
    watching = watch(repo, tmp_path, full=False)
    (nested / ".git" / "config").write_text("[core]\n\tfsmonitor = touch /tmp/planted\n")

    (line,) = watching.check()

    assert line == f"{nested}/.git/config: changed by a command; caretz put it back"
    assert (nested / ".git" / "config").read_bytes() == before


def test_a_hooks_folder_swapped_for_a_link_out_is_put_back_inside_never_through_it(repo, tmp_path):
    """Under Landlock `.git/hooks` may become a link to HOME; the put-back of the hooks
    it held goes into a new folder in `.git`, never through the link."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("mine\n")
    git_dir = repo / ".git"
    watching = watch(repo, tmp_path, full=True)
    samples = sorted(path.name for path in (git_dir / "hooks").iterdir())
    shutil.rmtree(git_dir / "hooks")
    (git_dir / "hooks").symlink_to(home)

    lines = watching.check()

    assert sorted(path.name for path in home.iterdir()) == [".bashrc"]
    assert (git_dir / "hooks").is_dir() and not (git_dir / "hooks").is_symlink()
    assert sorted(path.name for path in (git_dir / "hooks").iterdir()) == samples
    assert lines[0] == f"{git_dir / 'hooks'}: changed by a command; caretz put it back"
    assert list((tmp_path / "quarantine").rglob("hooks"))  # the link, kept aside
    assert watching.check() == []
