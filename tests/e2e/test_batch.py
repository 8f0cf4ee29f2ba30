"""`caretz batch` end to end: real git worktrees, a real caretz process per task, the
scripted model server answering each task by its model's name.

Two tasks meet at the server (each one's first request waits for the other's), so they
can only finish when they run at once; a stuck task meets the judge and ends with exit
3; a rerun with the same results file sends nothing; Ctrl-C while a task waits on a
reply that never comes ends it as interrupted, writes its result, leaves no process
behind, and a rerun carries its session on.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.checkpoints.helpers import git, require_git, write
from tests.e2e.conftest import Caretz
from tests.e2e.test_loop_guard import GO_TEST, GO_TEST_SCRIPT, STUCK
from tests.modelserver import RecordedRequest, Reply, text, tool
from tests.processes import live_command_lines

WAIT_S = 90  # for what a task should do at once: generous, so busy machines pass
JUDGE = "batch-judge"
PRICES = {
    "anthropic/*": {"input": 3.0, "output": 15.0},
    f"anthropic/{JUDGE}": {"input": 1.0, "output": 5.0},
}


@pytest.fixture
def repo(workspace: Path) -> Path:
    require_git()
    write(workspace, "README.md", "# shop\n")
    write(workspace, "gotest.sh", GO_TEST_SCRIPT, executable=True)
    git(workspace, "init", "-q", "-b", "main")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-qm", "first")
    return workspace


def tasks_file(folder: Path, *tasks: dict[str, Any]) -> Path:
    path = folder.parent / "tasks.jsonl"
    path.write_text("".join(json.dumps(task) + "\n" for task in tasks))
    return path


def results_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


class Meeting:
    """Each named model's first request waits until every named model has sent one:
    the tasks that ask them must be running at the same time."""

    def __init__(self, replies: dict[str, list[Reply]]):
        self.replies = {model: list(script) for model, script in replies.items()}
        self.arrived = {model: threading.Event() for model in replies}

    def __call__(self, request: RecordedRequest) -> Reply | None:
        model = request.model or ""
        if model not in self.replies:
            return None
        self.arrived[model].set()
        if not all(event.wait(WAIT_S) for event in self.arrived.values()):
            return Reply(status=500, error_message="the tasks did not run at once")
        return self.replies[model].pop(0)


def test_tasks_run_two_at_once_each_in_its_worktree_and_a_rerun_sends_nothing(
    caretz: Caretz, server, repo
):
    caretz.write_config({"prices": PRICES})
    server.on(
        Meeting(
            {
                "alpha": [tool("write", path="alpha.txt", content="a\n"), text("Wrote alpha.")],
                "beta": [tool("bash", command="echo b > beta.txt"), text("Wrote beta.")],
            }
        )
    )
    server.add(*[tool("bash", command=GO_TEST) for _ in range(6)], model="stuck")
    server.add(text("testDB is still undefined; I need the build tags."), model="stuck")
    server.add(*[text(json.dumps(STUCK), usage=(1000, 50, 0)) for _ in range(2)], model=JUDGE)
    tasks = tasks_file(
        repo,
        {"id": "alpha", "prompt": "write alpha", "model": "anthropic/alpha"},
        {"id": "beta", "prompt": "write beta", "model": "anthropic/beta"},
        {"id": "stuck", "prompt": "make the db tests pass", "model": "anthropic/stuck"},
    )
    results = repo.parent / "results.jsonl"

    run = caretz(
        "--loop-guard-model", f"anthropic/{JUDGE}",
        "batch", str(tasks), "--workers", "2", "--results", str(results),
    )  # fmt: skip

    assert run.code == 1, run.stderr
    assert "caretz batch: 2 done, 1 loop_guard" in run.stderr
    lines = {line["id"]: line for line in results_of(results)}
    assert [lines[t]["status"] for t in ("alpha", "beta", "stuck")] == [
        "done",
        "done",
        "loop_guard",
    ]
    assert [lines[t]["exit_code"] for t in ("alpha", "beta", "stuck")] == [0, 0, 3]
    folders = repo / ".caretz" / "worktrees"
    for name in ("alpha", "beta", "stuck"):
        assert lines[name]["worktree"] == str(folders / f"batch-{name}")
        assert lines[name]["branch"] == f"caretz/batch-{name}"
        assert lines[name]["duration_s"] > 0 and lines[name]["session_id"]
    # Each task changed its own checkout; the repository's own stays as it was.
    assert (folders / "batch-alpha" / "alpha.txt").read_text() == "a\n"
    assert (folders / "batch-beta" / "beta.txt").read_text() == "b\n"
    assert not (folders / "batch-alpha" / "beta.txt").exists()
    assert not (repo / "alpha.txt").exists() and not (repo / "beta.txt").exists()
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    # The stuck task: the judge's two calls are in its usage and cost, and shown apart.
    stuck = lines["stuck"]
    assert [v["action"] for v in stuck["guard_verdicts"]] == ["redirect", "stop"]
    assert stuck["usage"]["judge"]["input_tokens"] == 2000
    assert stuck["usage"]["input_tokens"] == 7 * 100 + 2000
    assert stuck["judge_cost_usd"] == pytest.approx(2000 * 1e-6 + 100 * 5e-6)
    agent_cost = 700 * 3e-6 + 140 * 15e-6
    assert stuck["cost_usd"] == pytest.approx(agent_cost + stuck["judge_cost_usd"])
    ended = [e for e in caretz.events(stuck["session_id"]) if e["type"] == "Turn.Ended"][-1]
    assert ended["usage"]["judge"]["input_tokens"] == 2000
    assert ended["cost_usd"] == pytest.approx(stuck["cost_usd"])
    assert run.stdout.count("done") == 2 and "loop_guard" in run.stdout  # the closing table
    sent = len(server.requests)

    rerun = caretz("batch", str(tasks), "--results", str(results))

    assert rerun.code == 1
    assert len(server.requests) == sent  # every task is in the results: nothing runs
    assert "caretz batch: 3 already in results.jsonl, skipped" in rerun.stderr
    assert len(results_of(results)) == 3


def test_ctrl_c_interrupts_the_running_task_writes_its_result_and_a_rerun_carries_it_on(
    caretz: Caretz, server, repo
):
    waiting, release = threading.Event(), threading.Event()

    def held(request: RecordedRequest) -> Reply | None:
        if request.model != "held":
            return None
        if not release.is_set():
            waiting.set()
            release.wait(WAIT_S)  # the reply never comes while the batch runs
        return text("Done at last.")

    server.on(held)
    server.add(text("Later is done."), model="later")
    tasks = tasks_file(
        repo,
        {"id": "held", "prompt": "wait-for-the-model", "model": "anthropic/held"},
        {"id": "later", "prompt": "after-the-held-one", "model": "anthropic/later"},
    )
    results = repo.parent / "results.jsonl"
    argv = [sys.executable, "-m", "caretz", "batch", str(tasks), "--workers", "1"]
    argv += ["--results", str(results)]
    batch = subprocess.Popen(
        argv, cwd=repo, env=caretz.environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert waiting.wait(WAIT_S), "the held task never asked the model"
        batch.send_signal(signal.SIGINT)
        out, err = batch.communicate(timeout=WAIT_S)
    finally:
        release.set()
        if batch.poll() is None:
            batch.kill()

    assert batch.returncode == 130, err
    assert "run it again to carry on" in err.decode()
    (interrupted,) = results_of(results)
    assert (interrupted["id"], interrupted["status"], interrupted["exit_code"]) == (
        "held",
        "interrupted",
        130,
    )
    assert server.requests_for("later") == []  # never started
    assert not [pid for pid, line in live_command_lines() if b"wait-for-the-model" in line]

    rerun = caretz("batch", str(tasks), "--results", str(results))

    assert rerun.code == 0, rerun.stderr
    lines = results_of(results)
    assert [(line["id"], line["status"]) for line in lines[1:]] in (
        [("held", "done"), ("later", "done")],
        [("later", "done"), ("held", "done")],
    )
    carried_on = next(line for line in lines[1:] if line["id"] == "held")
    assert carried_on["session_id"] == interrupted["session_id"]  # its session, resumed
    assert "wait-for-the-model" in str(server.requests_for("held")[-1].messages[0])


def test_a_bad_tasks_file_is_one_line_naming_the_line_and_nothing_runs(
    caretz: Caretz, server, repo
):
    cases = {
        '{"id": "a", "prompt": "x"}\n{"id": "b", "prompt": "y"\n': "line 2: not JSON",
        '{"id": "a", "prompt": "x"}\n\n{"id": "a", "prompt": "y"}\n': (
            "line 3: id 'a' is line 1's too"
        ),
        '{"id": "a", "prompt": "x", "cwd": "nowhere"}\n': "line 1: cwd 'nowhere': no such folder",
        '{"id": "a", "prompt": "x", "model": "nosuch/model"}\n': "line 1: ",
    }
    tasks = repo.parent / "tasks.jsonl"
    for content, expected in cases.items():
        tasks.write_text(content)
        run = caretz("batch", str(tasks))
        assert run.code == 2, run.stderr
        assert run.stderr.startswith(f"caretz: {tasks} {expected}"), run.stderr
        assert len(run.stderr.splitlines()) == 1
    assert server.requests == []
    assert not (repo / ".caretz").exists()
    assert not (repo.parent / "tasks.results.jsonl").exists()
