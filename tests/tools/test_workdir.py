"""The bash cwd from one command to the next: only a directory inside the roots is kept,
whatever the command writes into its report."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from caretz.sandbox.detect import check_sandbox
from caretz.sandbox.policy import SandboxMode, build_policy
from caretz.sandbox.runner import open_sandbox
from caretz.tools.base import ToolContext
from caretz.tools.bash import BashTool
from caretz.tools.workdir import start_dir, take_report


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    policy = build_policy(cwd=work, home=tmp_path, mode=SandboxMode.OFF)
    sandbox = open_sandbox(policy, check_sandbox(policy.mode))
    yield ToolContext(workspace=policy.cwd, sandbox=sandbox, bash_timeout_s=30)
    sandbox.close()


def report(ctx: ToolContext, text: str) -> str | None:
    assert ctx.sandbox is not None
    _, host = ctx.sandbox.cwd_report()
    host.write_text(text)
    return take_report(ctx, host)


def test_a_cd_holds_for_the_next_command(ctx):
    bash = BashTool()
    assert bash.run({"command": "cd sub"}, ctx).ok
    assert bash.run({"command": "pwd"}, ctx).output.strip() == str(ctx.workspace / "sub")


@pytest.mark.parametrize(
    "forged", ["/etc", "relative/dir", "/nonexistent/dir", "{work}/sub\n/etc", "{work}/../"]
)
def test_a_report_outside_the_roots_is_not_kept(ctx, forged):
    note = report(ctx, forged.format(work=ctx.workspace))
    assert note is not None and "the next command starts in" in note
    assert start_dir(ctx) == (ctx.workspace, None)


def test_a_directory_gone_since_is_left_with_a_note(ctx):
    assert report(ctx, str(ctx.workspace / "sub")) is None
    (ctx.workspace / "sub").rmdir()
    where, note = start_dir(ctx)
    assert where == ctx.workspace and note is not None and "sub" in note


@pytest.mark.parametrize("form", ["link", "fifo"])
def test_a_report_swapped_for_a_link_to_a_key_or_a_fifo_is_not_read(ctx, tmp_path, form):
    """The report lies in the session's /tmp, which commands write: a link to a key
    there is not followed (its first line would reach the model in the note), and a
    FIFO nobody writes is not waited on."""
    key = tmp_path / "id_rsa"
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY----- workdir-canary\n")
    assert ctx.sandbox is not None
    _, host = ctx.sandbox.cwd_report()
    if form == "link":
        host.symlink_to(key)
    else:
        os.mkfifo(host)

    note = take_report(ctx, host)

    assert note is None  # as if the command reported nothing: the directory stays
    assert not os.path.lexists(host) and key.exists()
