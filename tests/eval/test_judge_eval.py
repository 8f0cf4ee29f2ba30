"""`caretz guard eval`: a judge scored on labelled trajectories.

The judge is the loopback model server, answering by trajectory and step
(tests/eval/judge_fixtures.py), so every figure below is worked out by hand
from the table there.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from caretz.eval.cli import guard_app
from caretz.eval.judge_command import EvalPlan, run_evaluation
from caretz.eval.judge_score import p95
from caretz.eval.labels import apply_labels
from caretz.eval.replay import load_trajectories
from caretz.eval.verdict_cache import CACHE_FILE
from caretz.guard.config import LoopGuardConfig
from caretz.pricing import cost_usd
from caretz.providers.registry import BUILTIN_PROVIDERS, create_provider
from caretz.runtime.judge import model_judge
from tests.eval.judge_fixtures import CALLS, PRICE_IN, PRICE_OUT, ScriptedJudgeServer, write_corpus
from tests.modelserver import ModelServer, text

JUDGE_REF = "anthropic/claude-sonnet-4-5"
DATA = Path(__file__).parents[1] / "data"
REPO = Path(__file__).parents[2]


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def evaluate_in_process(server: ModelServer, corpus: Path, data_dir: Path, **kw: Any) -> dict:
    clock = FakeClock()
    server.on(ScriptedJudgeServer(clock.advance))
    entry = dataclasses.replace(BUILTIN_PROVIDERS["anthropic"], base_url=server.url)
    judge = model_judge(
        create_provider(entry, "test-key"), "claude-sonnet-4-5", JUDGE_REF, clock=clock
    )
    evaluation = EvalPlan(
        labelling=apply_labels(load_trajectories(corpus)),
        config=LoopGuardConfig(),
        judge=judge,
        judge_settings={"model": JUDGE_REF, "base_url": server.url},
        cost=lambda call: cost_usd(JUDGE_REF, call.usage),
        data_dir=data_dir,
        concurrency=1,
        output="json",
        **kw,
    )
    printed: list[str] = []
    assert run_evaluation(evaluation, printed.append, lambda _: None) == 0
    (line,) = printed
    return json.loads(line)


def cli(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(guard_app, ["eval", *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def judge_env(server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    return server


# ---------------------------------------------------------------- the arithmetic


def test_every_cell_is_the_arithmetic_of_the_scripted_answers(tmp_path, server):
    report = evaluate_in_process(server, write_corpus(tmp_path / "c.jsonl"), tmp_path / "data")

    assert report["trajectories"] == {
        "given": 4,
        "judged": 4,
        "scored": 3,
        "not_scored_low_confidence": ["low"],
        "skipped_unlabelled": [],
        "interrupted": False,
    }
    verdicts = report["verdicts"]
    # Scored: loop-a TN TP TP, loop-b FN FP, prod FP TN; "low" is not scored.
    assert verdicts["overall"] == {
        "calls": 7,
        "should_be_stuck": 3,
        "tp": 2,
        "fp": 2,
        "fn": 1,
        "tn": 2,
        "precision": 0.5,
        "recall": pytest.approx(2 / 3),
        "f1": pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3)),
    }
    by_kind = verdicts["by_kind"]
    assert list(by_kind) == ["identical-call-repeat", "same-failure-repeat", "productive"]
    assert by_kind["same-failure-repeat"] == {
        "calls": 3, "should_be_stuck": 2, "tp": 2, "fp": 0, "fn": 0, "tn": 1,
        "precision": 1.0, "recall": 1.0, "f1": 1.0,
    }  # fmt: skip
    # loop-b: missed at the onset, and "stuck" (unsure) after it recovered at step 8.
    assert by_kind["identical-call-repeat"] == {
        "calls": 2, "should_be_stuck": 1, "tp": 0, "fp": 1, "fn": 1, "tn": 0,
        "precision": 0.0, "recall": 0.0, "f1": 0.0,
    }  # fmt: skip
    # Nothing on a productive run should be stuck: recall and F1 are undefined.
    assert by_kind["productive"] == {
        "calls": 2, "should_be_stuck": 0, "tp": 0, "fp": 1, "fn": 0, "tn": 1,
        "precision": 0.0, "recall": None, "f1": None,
    }  # fmt: skip
    assert verdicts["unsure_stuck"] == {"calls": 1, "should_be_stuck": 0}

    # Active mode: loop-a is redirected at 10 (onset 8, +2) and stopped at 16 (+8),
    # leaving step 17 of its stretch; loop-b's unsure "stuck" changes nothing; prod is
    # redirected at 4 by its wrong verdict; the low-confidence run is left out.
    assert report["outcome"] == {
        "within_steps": 10,
        "stuck_runs": 2,
        "redirected_within": 1,
        "stopped_within": 1,
        "redirected_in_loop": 1,
        "stopped_in_loop": 1,
        "interrupted_before_onset": 0,
        "median_steps_to_redirect": 2,
        "median_steps_to_stop": 8,
        "stuck_calls_after_stop": 1,
        "productive_runs": 1,
        "productive_interrupted": 1,
        "productive_redirected": 1,
        "productive_stopped": 0,
    }
    runs = {run["trajectory"]: run for run in report["runs"]}
    assert [(runs[t]["redirect_step"], runs[t]["stop_step"]) for t in runs] == [
        (10, 16),
        (None, None),
        (4, None),
        (4, None),
    ]
    assert runs["loop-a"]["redirect_by"] == "repeat"

    # Per call, over all 8 calls: call k took k seconds, k×1000 in and k×10 out tokens.
    per_call_cost = [k * (1000 * PRICE_IN + 10 * PRICE_OUT) / 1e6 for k in range(1, CALLS + 1)]
    assert report["per_call"] == {
        "calls": 8,
        "asked": 8,
        "latency_mean_s": 4.5,
        "latency_p95_s": 8.0,
        "input_tokens_mean": 4500.0,
        "output_tokens_mean": 45.0,
        "cost_mean_usd": pytest.approx(sum(per_call_cost) / 8),
        "cost_total_usd": pytest.approx(sum(per_call_cost)),
        "errors": 1,
    }

    wrong = [
        (w["trajectory"], w["step"], w["answered_stuck"], w["reason"]) for w in report["wrong"]
    ]
    assert wrong == [
        ("loop-b", 4, False, "loop-b: the edits look different"),
        ("loop-b", 10, True, "loop-b: maybe the same KeyError"),
        ("prod", 4, True, "prod: TypeError three times"),
    ]
    unreadable = next(c for c in report["calls"] if (c["trajectory"], c["step"]) == ("prod", 10))
    assert unreadable["error"].startswith("unreadable reply: I think it is fine.")
    assert unreadable["answered_stuck"] is False and unreadable["expected_stuck"] is False


def test_within_narrows_what_counts_as_in_time(tmp_path, server):
    report = evaluate_in_process(
        server, write_corpus(tmp_path / "c.jsonl"), tmp_path / "data", within=5
    )
    outcome = report["outcome"]
    # loop-a's stop at +8 is still in the loop, but not within 5 steps of its onset.
    assert (outcome["redirected_within"], outcome["stopped_within"]) == (1, 0)
    assert outcome["stopped_in_loop"] == 1


def test_p95_is_the_nearest_rank():
    assert p95([]) is None
    assert p95([3.0]) == 3.0
    assert p95([float(v) for v in range(1, 21)]) == 19.0  # ceil(0.95 × 20) = 19th
    assert p95([float(v) for v in range(40, 0, -1)]) == 38.0


# ---------------------------------------------------------------- the command


def test_text_table_and_json_carry_the_same_figures(tmp_path, judge_env):
    judge_server = ScriptedJudgeServer()
    judge_env.on(judge_server)
    corpus = write_corpus(tmp_path / "c.jsonl")

    code, out, err = cli(corpus, "--judge", JUDGE_REF, "--no-cache")
    code_json, out_json, _ = cli(corpus, "--judge", JUDGE_REF, "--no-cache", "--output", "json")

    assert code == 0 and code_json == 0, err
    report = json.loads(out_json)
    assert report["verdicts"]["overall"]["tp"] == 2 and report["per_call"]["calls"] == 8
    lines = out.splitlines()
    assert lines[0].startswith(f"Judge {JUDGE_REF} (reasoning off, minConfidence 0.5, prompt ")
    assert lines[0].endswith("4 of 4 trajectories judged, 3 scored.")
    assert "| **overall** | 7 | 3 | 2 | 2 | 1 | 2 | 0.50 | 0.67 | 0.57 |" in lines
    assert "| same-failure-repeat | 3 | 2 | 2 | 0 | 0 | 1 | 1.00 | 1.00 | 1.00 |" in lines
    assert "| identical-call-repeat | 2 | 1 | 0 | 1 | 1 | 0 | 0.00 | 0.00 | 0.00 |" in lines
    assert "| productive | 2 | 0 | 0 | 1 | 0 | 1 | 0.00 | – | – |" in lines
    assert "| stuck runs | 2 | 1 | 1 | 1 | 1 | 0 | 2 | 8 | 1 |" in lines
    assert "Productive runs: 1 of 1 interrupted (1 redirected, 0 stopped)." in lines
    assert "Not scored (low-confidence label): low." in lines
    assert any(line.startswith("Per judge call (8 calls, 8 asked in this run") for line in lines)
    assert any(
        "tokens mean 4,500 in / 45 out; cost mean $0.0142 (total $0.1134)" in line for line in lines
    )
    assert "Wrong verdicts (3):" in lines
    assert any(
        line.startswith("- loop-b @4 repeat: 3× ")
        and line.endswith(
            "answered not stuck (0.30), expected stuck: loop-b: the edits look different"
        )
        for line in lines
    )
    assert (
        "| loop-a | same-failure-repeat 8–17 | 18 | 3 | 2 | 0 | @10 repeat | @16 repeat |" in lines
    )
    assert (
        "| low | productive (low confidence, not scored) | 6 | 1 | 1 | 0 | @4 repeat | – |" in lines
    )
    assert err.count("judge calls (") == 4  # a progress line per trajectory


def test_a_rerun_is_answered_from_the_cache_without_a_judge_call(tmp_path, judge_env):
    judge_env.on(ScriptedJudgeServer())
    corpus = write_corpus(tmp_path / "c.jsonl")

    first = cli(corpus, "--judge", JUDGE_REF, "--output", "json")
    assert len(judge_env.requests) == CALLS
    second = cli(corpus, "--judge", JUDGE_REF, "--output", "json")
    assert len(judge_env.requests) == CALLS  # no call at all

    one, two = json.loads(first[1]), json.loads(second[1])
    assert (one["per_call"]["asked"], two["per_call"]["asked"]) == (CALLS, 0)
    assert all(call["cached"] for call in two["calls"])
    for key in ("verdicts", "outcome", "runs"):
        assert one[key] == two[key]
    uncached = [{**call, "cached": True} for call in one["calls"]]
    assert uncached == two["calls"]  # the same answers, latency and tokens included
    cache = Path(os.environ["CARETZ_DATA_DIR"]) / CACHE_FILE
    assert len(cache.read_text().splitlines()) == CALLS
    # --no-cache asks again and keeps nothing new; another judge setting misses the cache.
    cli(corpus, "--judge", JUDGE_REF, "--no-cache")
    assert len(judge_env.requests) == 2 * CALLS
    cli(corpus, "--judge", JUDGE_REF, "--reasoning", "low")
    assert len(judge_env.requests) == 3 * CALLS
    assert len(cache.read_text().splitlines()) == 2 * CALLS


def test_concurrency_has_that_many_judge_calls_in_flight(tmp_path, judge_env):
    corpus = write_corpus(tmp_path / "c.jsonl")
    for concurrency in (4, 2):
        judge_server = ScriptedJudgeServer()
        # The first `concurrency` requests wait for each other: with fewer in flight
        # the barrier breaks and those calls fail.
        judge_server.barrier = threading.Barrier(concurrency, timeout=60)
        judge_env._responders.clear()
        judge_env.on(judge_server)
        code, out, err = cli(
            corpus,
            "--judge",
            JUDGE_REF,
            "--no-cache",
            "--concurrency",
            str(concurrency),
            "--output",
            "json",
        )
        assert code == 0, err
        report = json.loads(out)
        assert report["per_call"]["errors"] == 1  # only prod's unreadable reply
        assert judge_server.most_in_flight == concurrency
        assert len(judge_server.asked) == CALLS
        # Answers are the same whatever the order the trajectories finished in.
        assert [r["trajectory"] for r in report["runs"]] == ["loop-a", "loop-b", "prod", "low"]
        assert report["verdicts"]["overall"]["tp"] == 2


def test_limit_takes_the_first_labelled_trajectories(tmp_path, judge_env):
    judge_env.on(ScriptedJudgeServer())
    corpus = write_corpus(tmp_path / "c.jsonl")
    code, out, _ = cli(corpus, "--judge", JUDGE_REF, "--limit", "2", "--output", "json")
    assert code == 0
    report = json.loads(out)
    assert [r["trajectory"] for r in report["runs"]] == ["loop-a", "loop-b"]
    assert report["trajectories"]["given"] == 2 and len(judge_env.requests) == 5


def test_a_bare_model_id_on_a_base_url_is_judged_and_its_unknown_price_said(tmp_path, server):
    server.on(ScriptedJudgeServer())
    corpus = write_corpus(tmp_path / "c.jsonl", ["loop-a"])
    code, out, err = cli(corpus, "--judge", "my-judge", "--base-url", server.openai_url)
    assert code == 0, err
    assert {r.path for r in server.requests} == {"/v1/chat/completions"}
    assert {r.model for r in server.requests} == {"my-judge"}
    assert out.splitlines()[0].startswith(f"Judge my-judge at {server.openai_url} (reasoning off")
    assert any("cost mean unknown (no price for my-judge)" in line for line in out.splitlines())
    _, out_json, _ = cli(
        corpus, "--judge", "my-judge", "--base-url", server.openai_url, "--output", "json"
    )
    per_call = json.loads(out_json)["per_call"]
    assert per_call["cost_mean_usd"] is None and per_call["cost_total_usd"] is None


# ---------------------------------------------------------------- sessions and labels


def test_sessions_without_any_label_are_a_usage_error_not_an_empty_report(judge_env):
    sessions = Path(os.environ["CARETZ_DATA_DIR"]) / "sessions"
    shutil.copytree(DATA / "session-7f3a", sessions / "session-7f3a")

    code, out, err = cli("session-7f3a", "--judge", JUDGE_REF)

    assert (code, out) == (2, "")
    assert err.splitlines() == [
        "error: none of the 2 trajectories has a label, so there is nothing to score: give "
        "--labels FILE (docs/benchmarks.md) or a labelled corpus"
    ]
    assert judge_env.requests == []


def test_session_turns_are_scored_from_a_labels_file(tmp_path, judge_env):
    sessions = Path(os.environ["CARETZ_DATA_DIR"]) / "sessions"
    shutil.copytree(DATA / "session-7f3a", sessions / "session-7f3a")
    verdict = {"stuck": True, "confidence": 0.9, "reason": "testDB is missing", "try_instead": ""}
    judge_env.on(lambda request: text(json.dumps(verdict)))
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps({"session-7f3a#turn2": {"stuck": True, "first_stuck_step": 2}}))

    code, out, err = cli(
        "session-7f3a", "--judge", JUDGE_REF, "--labels", labels, "--output", "json"
    )

    assert code == 0, err
    assert "note: 1 trajectories have no label and are skipped: session-7f3a#turn1" in err
    report = json.loads(out)
    assert [r["trajectory"] for r in report["runs"]] == ["session-7f3a#turn2"]
    assert report["trajectories"]["skipped_unlabelled"] == ["session-7f3a#turn1"]
    (call,) = report["calls"]
    assert (call["step"], call["expected_stuck"], call["answered_stuck"]) == (2, True, True)
    assert report["verdicts"]["overall"]["tp"] == 1
    # A label for a session names all its turns: "not stuck" for every one is fine...
    labels.write_text(
        json.dumps({"session-7f3a": {"stuck": False}, "typo#turn9": {"stuck": False}})
    )
    code, out, err = cli(
        sessions / "session-7f3a", "--judge", JUDGE_REF, "--labels", labels, "--output", "json"
    )
    assert code == 0, err
    assert "note: the label for 'typo#turn9' matches no trajectory" in err
    report = json.loads(out)
    assert [r["trajectory"] for r in report["runs"]] == ["session-7f3a#turn1", "session-7f3a#turn2"]
    assert report["verdicts"]["overall"]["fp"] == 1
    # ...but a stuck step cannot name one of two turns.
    labels.write_text(json.dumps({"session-7f3a": {"stuck": True, "first_stuck_step": 2}}))
    code, out, err = cli("session-7f3a", "--judge", JUDGE_REF, "--labels", labels)
    assert code == 2 and "the session has 2 turns; label the stuck turn by its ID" in err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[1, 2]", "expected an object of labels"),
        ('{"x": {"stuck": "yes"}}', 'x: a label needs "stuck": true or false'),
        ('{"x": {"stuck": true}}', 'x: a stuck label needs "first_stuck_step"'),
        ('{"x": {"stuck": true, "first_stuck_step": -1}}', "'first_stuck_step' must be a step"),
        ('{"x": {"stuck": true, "first_stuck_step": 5, "stuck_until": 2}}', "comes before"),
        ("{", "not a JSON labels file"),
    ],
)
def test_a_bad_labels_file_is_one_line_and_exit_2(tmp_path, judge_env, content, message):
    labels = tmp_path / "labels.json"
    labels.write_text(content)
    code, out, err = cli(
        write_corpus(tmp_path / "c.jsonl"), "--judge", JUDGE_REF, "--labels", labels
    )
    assert (code, out) == (2, "")
    assert len(err.strip().splitlines()) == 1 and message in err
    assert judge_env.requests == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--judge", "nowhere/judge-1"], "unknown provider 'nowhere'"),
        (["--judge", "bare-model"], "names no provider"),
        (["--judge", JUDGE_REF, "--reasoning", "extreme"], "--reasoning 'extreme'"),
        (["--judge", JUDGE_REF, "--judge-timeout", "soon"], "--judge-timeout: 'soon' is not"),
        (["--judge", JUDGE_REF, "--output", "xml"], "--output 'xml'"),
        (["--judge", JUDGE_REF, "--labels", "missing.json"], "missing.json: no such file"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(tmp_path, judge_env, args, message):
    code, out, err = cli(write_corpus(tmp_path / "c.jsonl"), *args)
    assert (code, out) == (2, "")
    assert len(err.strip().splitlines()) == 1 and message in err


def test_a_missing_key_fails_before_any_replay(tmp_path, monkeypatch):
    code, _, err = cli(write_corpus(tmp_path / "c.jsonl"), "--judge", "anthropic/claude-opus-5-5")
    assert code == 2 and "set ANTHROPIC_API_KEY" in err


# ---------------------------------------------------------------- Ctrl-C


def test_ctrl_c_prints_what_finished_keeps_the_cache_and_a_rerun_resumes(tmp_path, server):
    corpus = write_corpus(tmp_path / "c.jsonl")
    judge_server = ScriptedJudgeServer()
    judge_server.hold_at = 4  # loop-a's three calls are answered; loop-b's first waits
    server.on(judge_server)
    env = {
        **os.environ,
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": "test-key",
        "PYTHONUNBUFFERED": "1",
    }
    command = [sys.executable, "-m", "caretz", "guard", "eval", str(corpus), "--judge", JUDGE_REF]
    process = subprocess.Popen(
        [*command, "--concurrency", "1"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert judge_server.holding.wait(60), "the fourth judge call never came"
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        judge_server.release.set()
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err
    assert "interrupted: 1 of 4 trajectories judged" in err
    assert "Interrupted: the figures cover the trajectories finished before Ctrl-C" in out
    assert "1 of 4 trajectories judged, 1 scored." in out.splitlines()[0]
    assert "| **overall** | 3 | 2 | 2 | 0 | 0 | 1 | 1.00 | 1.00 | 1.00 |" in out
    cache = Path(os.environ["CARETZ_DATA_DIR"]) / CACHE_FILE
    assert len(cache.read_text().splitlines()) == 3

    judge_server.hold_at = None
    asked_before = len(judge_server.asked)
    rerun = subprocess.run(
        [*command, "--output", "json"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert rerun.returncode == 0, rerun.stderr
    assert len(judge_server.asked) - asked_before == CALLS - 3  # only what was missing
    report = json.loads(rerun.stdout)
    assert report["per_call"]["asked"] == CALLS - 3
    assert report["verdicts"]["overall"]["tp"] == 2 and report["trajectories"]["judged"] == 4
