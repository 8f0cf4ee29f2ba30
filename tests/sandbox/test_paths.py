"""The file tools' path checks: real files, real symlinks, a temp HOME."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from caretz.sandbox.paths import PathGuard, PathRefused, resolve_path
from caretz.sandbox.policy import SandboxMode


@pytest.fixture
def guard(make_policy) -> PathGuard:
    return PathGuard(make_policy())


def _refusal(check, raw: str) -> str:
    with pytest.raises(PathRefused) as refused:
        check(raw)
    message = str(refused.value)
    assert "\n" not in message and message.startswith("refused: ")
    return message


def test_writes_inside_the_working_directory_resolve_to_real_paths(guard, work):
    checked = guard.for_write("src/new.py")
    assert checked.real == work / "src" / "new.py"
    assert guard.for_write(str(work / "a" / ".." / "b.txt")).real == work / "b.txt"


@pytest.mark.parametrize("raw", ["/var/tmp/outside.txt", "../escape.txt", "~/evil.txt"])
def test_writes_outside_the_roots_are_refused(guard, raw):
    message = _refusal(guard.for_write, raw)
    assert f"cannot write {raw}" in message and "outside the writable roots" in message


def test_add_dir_is_writable(make_policy, scratch):
    extra = scratch / "extra"
    extra.mkdir()
    assert PathGuard(make_policy(add_dirs=[extra])).for_write(str(extra / "f")).real == extra / "f"


def test_a_symlinked_directory_that_leaves_the_roots(guard, work, scratch):
    (scratch / "elsewhere").mkdir()
    (work / "linked").symlink_to(scratch / "elsewhere")
    message = _refusal(guard.for_write, "linked/file.txt")
    assert "through a symlink to" in message and "outside the writable roots" in message
    assert guard.for_read("linked").real == scratch / "elsewhere"  # reading outside is fine


def test_a_symlink_onto_a_read_only_file_is_refused(make_policy, work):
    """`link.txt -> .env` must not overwrite the real .env when .env is read-only."""
    (work / ".env").write_text("SECRET=1")
    (work / "link.txt").symlink_to(".env")
    guard = PathGuard(make_policy(extra_read_only=[".env"]))
    message = _refusal(guard.for_write, "link.txt")
    assert f"through a symlink to {work / '.env'}" in message and "read-only" in message
    assert PathGuard(make_policy()).for_write("link.txt").real == work / ".env"


@pytest.mark.parametrize(
    "raw", [".git/config", ".git/hooks/pre-commit", ".git/HEAD", ".caretz/settings.json"]
)
def test_git_and_project_settings_are_read_only(guard, raw):
    assert "is read-only in the sandbox" in _refusal(guard.for_write, raw)


def test_a_symlink_into_git_hooks_is_refused(guard, work):
    (work / "hook").symlink_to(work / ".git" / "hooks" / "post-checkout")
    assert ".git/hooks is read-only" in _refusal(guard.for_write, "hook")


def test_hidden_paths_are_unreadable_and_unwritable(make_policy, home, work):
    guard = PathGuard(make_policy(add_dirs=[home]))
    for raw in ["~/.ssh/id_rsa", str(home / ".aws" / "credentials"), "~/.netrc"]:
        assert "is hidden by the sandbox" in _refusal(guard.for_read, raw)
        assert "is hidden by the sandbox" in _refusal(guard.for_write, raw)
    assert guard.for_read("~/.bashrc").real == home / ".bashrc"
    (work / "key").symlink_to(home / ".ssh" / "id_rsa")
    assert "hidden" in _refusal(guard.for_read, "key")


def test_a_symlinked_credential_store_stays_hidden(make_policy, home, scratch):
    keys = scratch / "keys"
    keys.mkdir()
    (keys / "id_ed25519").write_text("key")
    (home / ".ssh" / "id_rsa").unlink()
    (home / ".ssh").rmdir()
    (home / ".ssh").symlink_to(keys)
    guard = PathGuard(make_policy())
    assert "hidden" in _refusal(guard.for_read, str(keys / "id_ed25519"))
    assert "hidden" in _refusal(guard.for_read, "~/.ssh/id_ed25519")


def test_proc_is_closed_to_the_file_tools(guard):
    assert "/proc is closed" in _refusal(guard.for_read, "/proc/self/environ")


def test_glob_and_grep_can_ask_whether_an_entry_is_hidden(guard, home, work):
    assert guard.is_hidden(home / ".ssh" / "id_rsa")
    assert not guard.is_hidden(home / ".bashrc")
    assert not guard.is_hidden(work / "README")


def test_read_only_mode_refuses_every_write(make_policy):
    guard = PathGuard(make_policy(mode=SandboxMode.READ_ONLY))
    assert "the sandbox is read-only" in _refusal(guard.for_write, "README")
    assert guard.for_read("README").real.name == "README"


def test_off_mode_checks_nothing(make_policy, home):
    guard = PathGuard(make_policy(mode=SandboxMode.OFF))
    assert guard.for_write("/var/tmp/anywhere").real == Path("/var/tmp/anywhere")
    assert guard.for_read("~/.ssh/id_rsa").real == home / ".ssh" / "id_rsa"


def test_what_cannot_be_resolved_is_refused(guard, work):
    os.symlink("loop-b", work / "loop-a")
    os.symlink("loop-a", work / "loop-b")
    assert "cannot resolve loop-a" in _refusal(guard.for_write, "loop-a")
    assert "only ~" in _refusal(guard.for_read, "~root/.profile")
    assert "empty" in _refusal(guard.for_read, "  ")


def test_resolution_follows_symlinks_before_dotdot(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "a" / "b")
    # The kernel resolves link first, so link/.. is a, not tmp_path.
    assert resolve_path(tmp_path / "link" / ".." / "x") == tmp_path / "a" / "x"
    (tmp_path / "dangling").symlink_to("missing/target")
    assert resolve_path(tmp_path / "dangling") == tmp_path / "missing" / "target"
