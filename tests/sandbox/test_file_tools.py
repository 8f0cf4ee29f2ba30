"""The in-process file tools (read, write, edit, glob, grep) obey the sandbox's roots.

Each escape is tried through the tool registry, as a model's call would be: a refusal is
a failed result of one line, and nothing outside the roots is touched.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from caretz.messages import ToolCall
from caretz.sandbox.detect import check_sandbox
from caretz.sandbox.policy import SandboxMode
from caretz.sandbox.runner import open_sandbox
from caretz.tools.base import ToolContext, ToolResult
from caretz.tools.registry import ToolRegistry, default_tools
from tests.sandbox.conftest import SECRET_KEY


def call(ctx: ToolContext, name: str, **args: object) -> ToolResult:
    """One agent's call: calls on the same context share one registry (what it has read)."""
    registry = ctx.__dict__.setdefault("_registry", ToolRegistry(default_tools()))
    return registry.run(ToolCall(id="call_1", name=name, arguments=dict(args)), ctx)


def refused(result: ToolResult, *words: str) -> bool:
    line = result.output
    return (
        not result.ok
        and line.startswith("refused: ")
        and "\n" not in line
        and all(word in line for word in words)
    )


@pytest.fixture
def outside(scratch: Path) -> Path:
    path = scratch / "outside"
    path.mkdir()
    return path


@pytest.fixture
def context(make_policy, bwrap_sandbox):
    def make(**policy: object) -> ToolContext:
        sandbox = bwrap_sandbox(make_policy(**policy))
        return ToolContext(workspace=sandbox.policy.cwd, sandbox=sandbox)

    return make


@pytest.fixture
def ctx(context) -> ToolContext:
    return context()


def test_writes_outside_the_roots_are_refused(ctx, work, home, outside):
    escapes = [str(outside / "outside.txt"), "../escape.txt", "~/evil.txt", "/tmp/outside.txt"]
    for path in escapes:
        for name, args in (
            ("write", {"content": "x"}),
            ("edit", {"old_string": "a", "new_string": "b"}),
        ):
            result = call(ctx, name, path=path, **args)
            assert refused(result, "outside the writable roots"), (name, path, result.output)
    assert not (outside / "outside.txt").exists()
    assert not (work.parent / "escape.txt").exists() and not (home / "evil.txt").exists()


def test_a_symlinked_directory_that_leaves_the_roots_is_refused(ctx, work, outside):
    (work / "linked").symlink_to(outside)
    result = call(ctx, "write", path="linked/planted.txt", content="x")
    assert refused(result, "through a symlink", "outside the writable roots")
    assert not (outside / "planted.txt").exists()


def test_credential_stores_cannot_be_read_or_found(context, home):
    ctx = context(add_dirs=[str(home)])  # even with the whole home writable
    assert refused(call(ctx, "read", path="~/.ssh/id_rsa"), "hidden by the sandbox")
    assert refused(call(ctx, "write", path="~/.ssh/authorized_keys", content="k"), "hidden")
    # Dotfiles too (include_ignored): the hidden paths stay out all the same.
    listed = call(ctx, "glob", pattern="**/*", path=str(home), include_ignored=True)
    assert listed.ok and ".bashrc" in listed.output
    assert ".ssh" not in listed.output and ".aws" not in listed.output
    found = call(
        ctx, "grep", pattern="private-key|password|dotfile", path=str(home), include_ignored=True
    )
    assert "ordinary dotfile" in found.output and SECRET_KEY not in found.output
    assert ".netrc" not in found.output


def test_a_symlink_to_a_hidden_file_is_not_followed_by_glob_or_grep(ctx, work, home):
    (work / "key").symlink_to(home / ".ssh" / "id_rsa")
    assert refused(call(ctx, "read", path="key"), "hidden by the sandbox")
    assert SECRET_KEY not in call(ctx, "grep", pattern="key").output
    assert "key" not in call(ctx, "glob", pattern="*").output.splitlines()


def test_proc_is_closed(ctx):
    assert refused(call(ctx, "read", path="/proc/self/environ"), "/proc is closed")


def test_a_symlink_onto_a_read_only_file_is_judged_where_it_lands(context, work):
    (work / ".env").write_text("SECRET=1\n")
    (work / "link.txt").symlink_to(".env")
    ctx = context(extra_read_only=[".env"])
    assert refused(call(ctx, "write", path="link.txt", content="x"), "read-only in the sandbox")
    edit = call(ctx, "edit", path="link.txt", old_string="SECRET=1", new_string="SECRET=2")
    assert refused(edit, "through a symlink", ".env is read-only")
    assert (work / ".env").read_text() == "SECRET=1\n"
    assert call(ctx, "read", path="link.txt").ok  # reading it is fine


def test_git_and_project_rules_are_not_written(ctx, work):
    for path in (".git/config", ".git/hooks/pre-commit", ".caretz/settings.json"):
        assert refused(call(ctx, "write", path=path, content="x"), "read-only in the sandbox")
    assert not (work / ".caretz").exists()


def test_inside_the_roots_everything_works(ctx, work):
    assert call(ctx, "write", path="src/app.py", content="print(1)\n").ok
    assert call(ctx, "edit", path="src/app.py", old_string="1", new_string="2").ok
    assert (work / "src" / "app.py").read_text() == "print(2)\n"
    assert "src/app.py" in call(ctx, "glob", pattern="**/*.py").output
    assert "src/app.py:1:print(2)" in call(ctx, "grep", pattern="print").output


def test_read_only_mode_refuses_every_write(context, work):
    ctx = context(mode=SandboxMode.READ_ONLY)
    assert refused(call(ctx, "write", path="new.txt", content="x"), "the sandbox is read-only")
    assert refused(
        call(ctx, "edit", path="README", old_string="hello", new_string="bye"), "read-only"
    )
    assert call(ctx, "read", path="README").ok
    assert (work / "README").read_text() == "hello" and not (work / "new.txt").exists()


def test_with_the_sandbox_off_only_caretz_own_files_are_refused(
    make_policy, work, scratch, outside
):
    config, data = scratch / "config", scratch / "data"
    data.mkdir()
    policy = make_policy(mode=SandboxMode.OFF, caretz_dirs=[config / "profiles.json", data])
    sandbox = open_sandbox(policy, check_sandbox(policy.mode))
    ctx = ToolContext(workspace=work, sandbox=sandbox)

    assert call(ctx, "write", path=str(outside / "free.txt"), content="x").ok
    assert call(ctx, "read", path="~/.ssh/id_rsa").ok
    for path in (str(config / "profiles.json"), str(data / "sessions" / "x.jsonl"), ".caretz/x"):
        assert refused(call(ctx, "write", path=path, content="x"), "caretz's own"), path
    (work / "sneaky").symlink_to(data)
    assert refused(call(ctx, "write", path="sneaky/x", content="x"), "through a symlink")


def test_a_symlink_swapped_in_after_the_check_is_not_followed(ctx, work, outside):
    """What was checked is what is opened: a symlink put in its place since is never
    followed, for the file itself or a directory on the way."""
    from caretz.sandbox import safe_open

    (outside / "stolen.txt").write_text("secret")
    target = work / "plain.txt"
    target.write_text("x")
    checked = ctx.sandbox.paths.for_write("plain.txt")
    target.unlink()
    target.symlink_to(outside / "stolen.txt")
    with pytest.raises(safe_open.PathMoved):
        safe_open.open_regular(checked.real, ctx.sandbox.paths.policy.roots)
    safe_open.replace_file(checked.real, b"data", ctx.sandbox.paths.policy.roots)
    assert (outside / "stolen.txt").read_text() == "secret"  # the link was replaced, not followed
    assert not os.path.islink(target) and target.read_text() == "data"

    (work / "sub").mkdir()
    (work / "sub" / "f.txt").write_text("x")
    checked = ctx.sandbox.paths.for_write("sub/f.txt")
    (work / "sub" / "f.txt").unlink()
    (work / "sub").rmdir()
    (work / "sub").symlink_to(outside)
    (outside / "f.txt").write_text("outside")
    with pytest.raises(safe_open.PathMoved):
        safe_open.open_regular(checked.real, ctx.sandbox.paths.policy.roots)
    with pytest.raises(safe_open.PathMoved):
        safe_open.replace_file(checked.real, b"data", ctx.sandbox.paths.policy.roots)
    assert (outside / "f.txt").read_text() == "outside"


@pytest.mark.parametrize("openat2", [True, False])
def test_the_walk_without_openat2_refuses_the_same_symlinks(work, outside, openat2, monkeypatch):
    """Kernels before 5.6 take the component-by-component walk; it follows no symlink."""
    from caretz.sandbox import safe_open

    monkeypatch.setattr(safe_open, "_have_openat2", openat2)
    (work / "dir").mkdir()
    (work / "dir" / "f.txt").write_text("inside")
    (work / "link").symlink_to(outside)
    fd, _ = safe_open.open_regular(work / "dir" / "f.txt", (work,))
    assert os.read(fd, 100) == b"inside"
    os.close(fd)
    for path in (work / "link" / "f.txt", work / "link"):
        with pytest.raises(safe_open.PathMoved):
            safe_open.open_exact(path, os.O_RDONLY, (work,))


def test_an_image_under_a_hidden_path_is_refused_like_any_file(ctx, home):
    from tests.pictures import png

    (home / ".ssh" / "qr.png").write_bytes(png(4, 4))
    result = call(ctx, "read", path="~/.ssh/qr.png")
    assert refused(result, "hidden by the sandbox") and result.images == []
