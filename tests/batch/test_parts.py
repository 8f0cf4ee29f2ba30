"""caretz batch's parts in-process: the tasks file's checks, the results file (whole lines,
a torn tail, the last line of a task wins), a task's command line, the views."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from caretz.batch.child import absolute_paths, run_argv
from caretz.batch.results import ResultsFile, TaskResult
from caretz.batch.tasks import Task, TaskFileError, read_tasks
from caretz.batch.view import BatchLiveView, BatchTally, PlainView, closing_table, counts_text


def test_a_task_line_is_checked_key_by_key(tmp_path: Path):
    tasks = tmp_path / "tasks.jsonl"
    bad = {
        '{"id": "a", "promt": "x"}': "line 1: unknown key 'promt' (a task has id, prompt, cwd",
        '{"id": "a b", "prompt": "x"}': "line 1: id 'a b': use up to 94 letters",
        '{"id": "a", "prompt": ""}': "line 1: 'prompt' must be a non-empty string",
        '["a", "x"]': 'line 1: a task is a JSON object, {"id": …, "prompt": …}',
        "\n\n": "has no tasks",
    }
    for line, expected in bad.items():
        tasks.write_text(line + "\n")
        with pytest.raises(TaskFileError) as raised:
            read_tasks(tasks, tmp_path)
        assert str(raised.value).startswith(f"{tasks} {expected}") or expected in str(raised.value)
    (tmp_path / "sub").mkdir()
    tasks.write_text('{"id": "x.1", "prompt": "go", "cwd": "sub", "model": "m", "profile": "p"}\n')
    (task,) = read_tasks(tasks, tmp_path)
    assert task == Task(id="x.1", prompt="go", cwd=tmp_path / "sub", model="m", profile="p", line=1)
    assert task.worktree_name == "batch-x.1"


def test_results_are_whole_lines_a_torn_tail_is_skipped_and_the_last_line_wins(tmp_path):
    path = tmp_path / "results.jsonl"
    results = ResultsFile(path)
    results.append(TaskResult(id="a", status="interrupted", exit_code=130, session_id="s1"))
    with path.open("a") as file:
        file.write('{"id": "b", "stat')  # a batch killed mid-line
    results.append(TaskResult(id="a", status="done", exit_code=0, session_id="s1", cost_usd=0.5))

    recorded, unreadable = results.recorded()

    assert unreadable == 1
    assert list(recorded) == ["a"] and recorded["a"].status == "done"
    lines = path.read_text().splitlines()
    assert json.loads(lines[-1])["cost_usd"] == 0.5 and len(lines) == 3


def test_a_result_object_becomes_the_tasks_line():
    run = {
        "type": "result",
        "session_id": "s9",
        "status": "loop_guard",
        "exit_code": 3,
        "message": "the loop guard ended the turn",
        "text": "a report",
        "tool_calls": 6,
        "usage": {"input_tokens": 2700, "output_tokens": 240, "judge": {"input_tokens": 2000}},
        "cost_usd": 0.0067,
        "judge_cost_usd": 0.0025,
        "guard_verdicts": [{"action": "redirect"}, {"action": "stop"}],
    }
    result = TaskResult.from_run("t", run, worktree="/w", branch="caretz/batch-t", duration_s=2)

    assert result.to_dict() == {
        "id": "t",
        "status": "loop_guard",
        "exit_code": 3,
        "message": "the loop guard ended the turn",
        "worktree": "/w",
        "branch": "caretz/batch-t",
        "session_id": "s9",
        "tool_calls": 6,
        "usage": run["usage"],
        "cost_usd": 0.0067,
        "judge_cost_usd": 0.0025,
        "guard_verdicts": run["guard_verdicts"],
        "duration_s": 2,
    }
    assert result.tokens == 2940


def test_a_tasks_run_takes_the_batchs_flags_its_files_absolute(tmp_path):
    flags = {"config": "p.json", "add_dir": ["../data"], "loop_guard": "active", "output": "text"}
    fixed = absolute_paths(flags, tmp_path)

    argv = run_argv(fixed, "fix it", resume="s1")

    assert argv == [
        "--config", str(tmp_path / "p.json"),
        "--add-dir", str(tmp_path / "../data"),
        "--loop-guard", "active",
        "--resume", "s1",
        "--output", "json", "-p", "fix it",
    ]  # fmt: skip


def test_the_views_count_the_tasks_and_the_table_lists_every_one(tmp_path):
    task = Task(id="a", prompt="fix the login page", cwd=tmp_path)
    tally = BatchTally(total=3, clock=lambda: 100.0)
    out = io.StringIO()
    plain = PlainView(tally, out)
    plain.started(task, tmp_path / "w")
    plain.finished(TaskResult(id="a", status="done", exit_code=0, cost_usd=0.25))
    plain.started(Task(id="b", prompt="add tests", cwd=tmp_path), tmp_path / "w2")

    assert tally.headline() == "1 done · 1 running · 0 failed · 1 waiting · 0 tokens · $0.2500"
    assert out.getvalue().splitlines()[1].startswith("caretz batch: a done (exit 0) · 0 tool calls")
    screen = Console(file=io.StringIO(), width=100, record=True)
    live = BatchLiveView(tally, screen)
    live.close()
    drawn = Console(file=io.StringIO(), width=100, record=True)
    drawn.print(live)
    shown = drawn.export_text()
    assert shown.startswith("caretz batch · 1 done · 1 running") and "b  0:00" in shown
    table = Console(file=io.StringIO(), width=100, record=True)
    closing_table(
        [task, Task(id="b", prompt="x", cwd=tmp_path)],
        {"a": TaskResult(id="a", status="done", exit_code=0)},
        table,
    )
    assert "not run" in table.export_text()
    assert (
        counts_text(["loop_guard", "done", "done", "not run"]) == "2 done, 1 loop_guard, 1 not run"
    )
