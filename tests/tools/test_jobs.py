"""Background jobs: bash `background: true`, job_output, job_stop, and the job table.

Real processes; leftovers are looked for in /proc by a unique `sleep` duration. Jobs in
a real sandbox (and with the sandbox off) are in tests/sandbox/test_tool_jobs.py.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from caretz.messages import ToolCall
from caretz.tools.base import ToolContext
from caretz.tools.jobtable import MAX_RUNNING_JOBS, JobTable
from caretz.tools.output import RollingLog
from caretz.tools.registry import ToolRegistry, default_tools
from tests.sandbox.helpers import marker, sleepers, wait_for


@pytest.fixture
def ctx(tmp_path: Path):
    context = ToolContext(workspace=tmp_path, jobs=JobTable(grace_s=0.5))
    yield context
    context.jobs.stop_all()


def run(ctx: ToolContext, name: str, **args):
    return ToolRegistry(default_tools()).run(ToolCall(id="call_1", name=name, arguments=args), ctx)


def start(ctx: ToolContext, command: str) -> str:
    result = run(ctx, "bash", command=command, background=True)
    assert result.ok, result.output
    return result.output.split("Started background job ", 1)[1].split(":", 1)[0]


def test_a_background_job_returns_at_once_and_its_output_is_read_in_pieces(ctx):
    mark = marker()
    began = time.monotonic()
    job_id = start(ctx, f"echo one; sleep 0.3; echo two; sleep {mark}")

    assert job_id == "j1"
    assert time.monotonic() - began < 2  # not waiting for the sleep
    first = run(ctx, "job_output", job_id="j1", wait=5)
    assert first.ok and first.output.splitlines()[0].startswith("job j1 · running · ")
    assert first.output.splitlines()[1:] == ["one"]
    rest = run(ctx, "job_output", job_id="j1", wait=5)  # carries on where the last read stopped
    assert rest.output.splitlines()[1:] == ["two"]
    again = run(ctx, "job_output", job_id="j1", offset=0)
    assert again.output.splitlines()[1:] == ["one", "two"]
    quiet = run(ctx, "job_output", job_id="j1")
    assert quiet.output.splitlines()[1:] == ["(no new output)"]

    stopped = run(ctx, "job_stop", job_id="j1")

    assert stopped.ok and stopped.output.startswith("Stopped job j1.")
    assert "job j1 · stopped" in stopped.output
    assert wait_for(lambda: not sleepers(mark), timeout=30)
    after = run(ctx, "job_output", job_id="j1", offset=0)  # still readable
    assert after.output.splitlines()[1:] == ["one", "two"]


def test_a_job_that_exits_says_its_code(ctx):
    start(ctx, "echo bye; exit 3")
    output = run(ctx, "job_output", job_id="j1", wait=5)
    assert wait_for(lambda: not ctx.jobs.get("j1").running, timeout=30)
    assert "exited with code 3" in run(ctx, "job_output", job_id="j1").output
    assert "bye" in output.output
    assert run(ctx, "job_stop", job_id="j1").output.startswith("Job j1 had already ended.")


def test_unknown_jobs_and_too_many_jobs_are_failed_results(ctx):
    missing = run(ctx, "job_output", job_id="j7")
    assert not missing.ok and missing.output == "no job 'j7': no background jobs in this session"
    for _ in range(MAX_RUNNING_JOBS):
        start(ctx, "sleep 30")
    refused = run(ctx, "bash", command="sleep 30", background=True)
    assert not refused.ok and "stop one with job_stop first" in refused.output
    assert "j8 (running)" in run(ctx, "job_stop", job_id="j9").output


def test_the_rolling_log_keeps_its_tail_and_says_what_it_dropped():
    log = RollingLog(keep=10)
    for piece in ("abcde", "fghij", "klmno", "pqrst"):
        log.add(piece)
    assert log.end == 20
    start = log.read(0, 100)
    assert start.dropped > 0 and start.text.endswith("pqrst") and start.next_offset == 20
    assert start.offset + len(start.text) == 20 and start.offset == start.dropped
    middle = log.read(16, 2)
    assert (middle.text, middle.next_offset, middle.dropped) == ("qr", 18, 0)
    assert log.read(99, 5).text == ""


def test_job_output_bounds_what_it_returns(tmp_path):
    ctx = ToolContext(workspace=tmp_path, output_limit_chars=100, jobs=JobTable())
    start(ctx, "seq 1 1000")
    assert wait_for(lambda: ctx.jobs.get("j1").log.closed, timeout=30)
    first = run(ctx, "job_output", job_id="j1")
    assert "read on with offset=100]" in first.output
    assert len(first.output) < 300
