from __future__ import annotations

import os
import re
import threading
from pathlib import Path

import pytest

from caretz.tools.base import ToolArgumentError, ToolContext
from caretz.tools.bash import BashTool, HeadTailBuffer, keep_head_and_tail


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path, bash_timeout_s=10)


def process_running(pid: int) -> bool:
    """Alive and not a zombie (an init that never reaps leaves zombies behind)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    if not stat.exists():
        return True
    try:
        state = stat.read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def first_pid(output: str) -> int:
    return int(output.splitlines()[0])


def test_zero_exit_is_ok_and_output_is_captured(ctx):
    result = BashTool().run({"command": "echo hello"}, ctx)
    assert result.ok
    assert result.exit_code == 0
    assert result.output == "hello"
    assert result.duration_s > 0


def test_non_zero_exit_fails_and_ends_with_exit_code_line(ctx):
    result = BashTool().run({"command": "echo to-stdout; echo to-stderr >&2; exit 3"}, ctx)
    assert not result.ok
    assert result.exit_code == 3
    assert result.output.splitlines() == ["to-stdout", "to-stderr", "[exit code 3]"]


def test_runs_in_the_workspace_without_stdin(ctx, tmp_path):
    # `cat` would hang on an inherited stdin; with /dev/null it ends at once.
    result = BashTool().run({"command": "pwd; cat; echo done", "timeout": 5}, ctx)
    assert result.ok
    assert result.output.splitlines() == [str(tmp_path), "done"]


def test_silent_success_says_so(ctx):
    result = BashTool().run({"command": "true"}, ctx)
    assert result.ok
    assert result.output == "(no output)"


def test_invalid_utf8_is_replaced_not_fatal(ctx):
    result = BashTool().run({"command": r"printf 'a\xffb'"}, ctx)
    assert result.ok
    assert result.output == "a\ufffdb"


def test_timeout_kills_the_whole_process_group(ctx):
    result = BashTool().run({"command": "sleep 30 & echo $!; sleep 30", "timeout": 0.5}, ctx)
    child = first_pid(result.output)
    assert not result.ok
    assert result.output.endswith(
        "[timed out after 0.5 s; the command and everything it started were killed]"
    )
    assert result.exit_code is None and result.ended_by == "timeout"  # not "exit -15"
    assert result.duration_s < 3
    assert not process_running(child)


def test_a_group_that_ignores_sigterm_gets_sigkill(ctx):
    command = "trap '' TERM; sleep 30 & echo $!; wait"
    result = BashTool(kill_grace_s=0.3).run({"command": command, "timeout": 0.3}, ctx)
    assert not result.ok
    assert "timed out" in result.output
    assert not process_running(first_pid(result.output))


def test_cancel_from_another_thread_kills_the_group(ctx):
    timer = threading.Timer(0.3, ctx.cancel.set)
    timer.start()
    try:
        result = BashTool().run({"command": "sleep 30 & echo $!; sleep 30"}, ctx)
    finally:
        timer.cancel()
    assert not result.ok
    assert re.search(
        r"\[cancelled after 0\.\d s; the command and everything it started were killed\]$",
        result.output,
    )
    assert result.duration_s < 3
    assert not process_running(first_pid(result.output))


def test_cancel_set_before_start_runs_nothing(ctx, tmp_path):
    ctx.cancel.set()
    result = BashTool().run({"command": "touch marker"}, ctx)
    assert not result.ok
    assert "cancelled" in result.output
    assert not (tmp_path / "marker").exists()


def test_background_process_holding_output_does_not_block(ctx):
    result = BashTool(output_drain_s=0.2).run({"command": "(sleep 1; echo late) & echo early"}, ctx)
    assert result.ok
    assert result.output.startswith("early")
    assert "later output is not shown" in result.output
    assert result.duration_s < 1


def test_long_output_keeps_head_and_tail(tmp_path):
    ctx = ToolContext(workspace=tmp_path, output_limit_chars=2000)
    command = 'for i in $(seq 1 5000); do echo "line $i"; done; exit 1'
    result = BashTool().run({"command": command}, ctx)
    lines = result.output.splitlines()
    assert lines[0] == "line 1"
    assert lines[-2:] == ["line 5000", "[exit code 1]"]
    assert re.search(r"^\[\.\.\. \d+ characters omitted \.\.\.\]$", result.output, re.M)
    assert len(result.output) <= 2000 + len("\n[exit code 1]")


def test_head_and_tail_marker_counts_exactly_what_was_cut():
    text = "a" * 1000 + "b" * 1000
    cut = keep_head_and_tail(text, 500)
    head, marker, tail = re.split(r"\n?(\[\.\.\. \d+ characters omitted \.\.\.\])\n", cut)
    omitted = int(re.search(r"\d+", marker).group())
    assert set(head) == {"a"} and set(tail) == {"b"}
    assert len(tail) > len(head)  # the tail gets the larger share
    assert len(head) + len(tail) + omitted == len(text)
    assert len(cut) <= 500


def test_short_output_is_untouched():
    assert keep_head_and_tail("short\ntext\n", 100) == "short\ntext\n"


def test_streamed_chunks_render_like_one_piece():
    text = "".join(f"row {i}\n" for i in range(3000))
    buffer = HeadTailBuffer(1500)
    for start in range(0, len(text), 7):
        buffer.add(text[start : start + 7])
    assert buffer.render() == keep_head_and_tail(text, 1500)


def test_timeout_must_be_positive(ctx):
    with pytest.raises(ToolArgumentError, match="timeout"):
        BashTool().run({"command": "true", "timeout": 0}, ctx)
