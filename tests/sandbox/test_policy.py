"""Building the session's policy from the mode, the roots and the user's lists."""

from __future__ import annotations

from pathlib import Path

import pytest

from caretz.sandbox.policy import (
    CREDENTIAL_STORES,
    PolicyError,
    SandboxMode,
    build_policy,
    home_from_env,
    parse_mode,
    root_protection,
)


def test_defaults(work, home):
    policy = build_policy(cwd=work, home=home)
    assert policy.mode is SandboxMode.WORKSPACE_WRITE
    assert policy.network is False
    assert policy.roots == (work,) and policy.writable_roots == (work,)
    assert home / ".ssh" in policy.hidden and home / ".docker" / "config.json" in policy.hidden
    assert len(CREDENTIAL_STORES) >= 20


def test_hidden_and_read_only_lists(work, home, scratch):
    policy = build_policy(
        cwd=work,
        home=home,
        add_dirs=["~"],
        caretz_dirs=[scratch / "config", scratch / "data"],
        extra_hidden=["~/.config/secret-tool", "secrets/*.pem"],
        extra_read_only=[".env"],
        uid=1234,
    )
    assert policy.roots == (work, home)
    assert {scratch / "config", scratch / "data", home / ".config" / "secret-tool"} <= set(
        policy.hidden
    )
    assert work / "secrets" / "*.pem" in policy.hidden
    assert Path("/run/user/1234") in policy.hidden
    assert policy.read_only == (work / ".env",)
    in_home = {p.relative_to(home) for p in policy.existing_hidden() if home in p.parents}
    assert in_home == {Path(".ssh"), Path(".aws"), Path(".docker/config.json"), Path(".netrc")}


def test_read_only_mode_has_no_writable_roots(work, home):
    policy = build_policy(cwd=work, home=home, mode=SandboxMode.READ_ONLY)
    assert policy.roots == (work,) and policy.writable_roots == ()


def test_a_root_that_is_not_a_directory(work, home):
    with pytest.raises(PolicyError, match="not a directory"):
        build_policy(cwd=work, home=home, add_dirs=[work / "README"])
    with pytest.raises(PolicyError, match="only ~"):
        build_policy(cwd=work, home=home, extra_hidden=["~other/.ssh"])


def test_parse_mode():
    assert parse_mode(" Read-Only ") is SandboxMode.READ_ONLY
    with pytest.raises(PolicyError, match="workspace-write, read-only, off"):
        parse_mode("danger")


def test_home_comes_from_the_environment_passed_in(tmp_path):
    assert home_from_env({"HOME": str(tmp_path)}) == tmp_path
    assert home_from_env({}, uid=0) == Path("/root")


def test_root_protection(work):
    protection = root_protection(work)
    assert protection.pinned == (work / ".git",)
    git = work / ".git"
    assert protection.read_only == (git / "hooks", git / "config", git / "info")
    # What git reads configuration or code from: a missing directory is covered...
    assert {git / "modules", git / "worktrees"} <= set(protection.missing_dirs)
    # ...and an existing one, or an existing commondir, is read-only.
    (git / "modules").mkdir()
    (git / "commondir").write_text("../elsewhere\n")
    again = root_protection(work)
    assert {git / "modules", git / "commondir"} <= set(again.read_only)
    assert git / "modules" not in again.missing_dirs
    worktree = work / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text("gitdir: /elsewhere\n")
    assert root_protection(worktree).read_only == (worktree / ".git",)
