"""`caretz guard replay`, the trajectory loaders and the peers' baselines.

The trajectories under tests/data/ are small, written for these tests: a
failure repeated three times, a productive run whose failures all differ, a long
exploration, identical polling calls and a two-turn caretz session log.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from caretz.eval.baselines import BASELINES, anti_looping_guardrail, goa_loop_detection
from caretz.eval.cli import guard_app
from caretz.eval.replay import (
    CORPUS_TOOL_KEY,
    TrajectoryError,
    load_trajectories,
    replay,
)
from caretz.guard.config import LoopGuardConfig
from tests.modelserver import ModelServer, text

DATA = Path(__file__).parents[1] / "data"
REPEAT = DATA / "repeat.jsonl"
PRODUCTIVE = DATA / "productive.jsonl"
EXPLORATION = DATA / "exploration.jsonl"
IDENTICAL = DATA / "identical_calls.jsonl"
SESSION = DATA / "session-7f3a"
YAML_FINGERPRINT = "Bash: ModuleNotFoundError: No module named 'yaml'"
GO_FINGERPRINT = "Bash: <path>/db_test.go:N: undefined: testDB"


def run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(guard_app, ["replay", *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


def jsonl(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def firings_of(records: list[dict], trigger: str | None = None) -> list[dict]:
    return [r for r in records if not r.get("summary") and trigger in (None, r["trigger"])]


# ---------------------------------------------------------------- loading


def test_corpus_steps_map_to_caretz_tools_and_keep_the_original_name():
    (trajectory,) = load_trajectories(REPEAT)
    assert trajectory.id == "repeat-missing-module"
    assert trajectory.model_ref == "test/looping-model"
    assert [s.tool for s in trajectory.steps] == [
        "bash",
        "bash",
        "edit",
        "bash",
        "read",
        "bash",
        "grep",
    ]
    assert trajectory.steps[6].args == {"command": "search_dir yaml", CORPUS_TOOL_KEY: "search"}
    assert CORPUS_TOOL_KEY not in trajectory.steps[0].args  # bash stays bash
    assert trajectory.steps[4].failed is None  # unknown stays unknown
    assert trajectory.label["first_stuck_step"] == 5


def test_a_session_log_becomes_one_trajectory_per_turn():
    first, second = load_trajectories(SESSION)  # the folder, or its events.jsonl
    assert [first.id, second.id] == ["session-7f3a#turn1", "session-7f3a#turn2"]
    assert second.task == "make the integration tests pass"
    assert second.model_ref == "anthropic/claude-sonnet-4-5"
    assert [s.args["command"] for s in second.steps] == [
        "go test ./...",
        "go test -run TestDB ./...",
        "go test ./...",
    ]
    assert [s.failed for s in second.steps] == [True, True, True]
    assert second.steps[0].exit_code == 1
    # Each response is fed before the call it issued; the last one is the answer.
    assert [r.before_step for r in second.responses] == [0, 1, 2, 3]
    assert second.final_text.startswith("testDB is missing")
    by_file = load_trajectories(SESSION / "events.jsonl")
    assert [t.id for t in by_file] == [first.id, second.id]


def test_a_bad_line_names_the_file_and_line(tmp_path):
    with pytest.raises(TrajectoryError, match=r"broken\.jsonl:2: not a JSON object"):
        load_trajectories(DATA / "broken.jsonl")
    odd = tmp_path / "odd.jsonl"
    odd.write_text('{"hello": 1}\n')
    with pytest.raises(TrajectoryError, match="neither a corpus trajectory"):
        load_trajectories(odd)


def test_a_torn_last_line_of_a_session_log_is_skipped(tmp_path):
    session = tmp_path / "s1"
    session.mkdir()
    text = (SESSION / "events.jsonl").read_text()
    (session / "events.jsonl").write_text(text + '{"type": "Tool.Cal')
    assert len(load_trajectories(session)) == 2


# ---------------------------------------------------------------- replay


def test_a_repeated_failure_fires_on_its_third_occurrence():
    (trajectory,) = load_trajectories(REPEAT)
    result = replay(trajectory, LoopGuardConfig())
    repeats = [f for f in result.firings if f.trigger == "repeat"]
    assert [(f.step, f.fingerprint) for f in repeats] == [(5, YAML_FINGERPRINT)]
    assert result.first_trigger_step == 5
    assert result.judge_calls >= 1  # the guard asked its (no-op) judge there


def test_a_productive_run_with_different_failures_stays_quiet():
    (trajectory,) = load_trajectories(PRODUCTIVE)
    result = replay(trajectory, LoopGuardConfig())
    assert result.firings == []
    assert result.summary_json() == {
        "trajectory": "productive-different-errors",
        "summary": True,
        "triggered": False,
        "first_trigger_step": None,
        "triggers": {},
    }


def test_replay_never_acts_even_when_the_profile_is_active():
    (trajectory,) = load_trajectories(REPEAT)
    result = replay(trajectory, LoopGuardConfig(mode="active", models=["other/*"]))
    assert [f.step for f in result.firings if f.trigger == "repeat"] == [5]


# ---------------------------------------------------------------- the CLI


def test_json_output_contract():
    code, out, _ = run(REPEAT, PRODUCTIVE, "--output", "json")
    assert code == 0
    records = jsonl(out)
    repeat_records = [r for r in records if r["trajectory"] == "repeat-missing-module"]
    assert {
        "trajectory": "repeat-missing-module",
        "step": 5,
        "trigger": "repeat",
        "fingerprint": YAML_FINGERPRINT,
        "severity": "judge",
    } in repeat_records
    for firing in firings_of(records):
        assert set(firing) == {"trajectory", "step", "trigger", "fingerprint", "severity"}
    # Per trajectory: its firings, then one summary.
    assert repeat_records[-1] == {
        "trajectory": "repeat-missing-module",
        "summary": True,
        "triggered": True,
        "first_trigger_step": 5,
        "triggers": {
            name: sum(1 for f in firings_of(repeat_records) if f["trigger"] == name)
            for name in {f["trigger"] for f in firings_of(repeat_records)}
        },
    }
    assert records[-1] == {
        "trajectory": "productive-different-errors",
        "summary": True,
        "triggered": False,
        "first_trigger_step": None,
        "triggers": {},
    }
    assert records.index(repeat_records[-1]) < records.index(records[-1])


def test_text_output_has_a_header_a_line_per_firing_and_a_closing_line():
    code, out, _ = run(REPEAT)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("repeat-missing-module  7 steps  label: stuck from step 5")
    repeat_line = next(line for line in lines if " repeat " in line)
    assert "step    5" in repeat_line and YAML_FINGERPRINT in repeat_line
    assert "first at step 5" in lines[-1]


def test_session_log_replay_fires_on_the_third_identical_build_failure():
    code, out, _ = run(SESSION, "--output", "json")
    assert code == 0
    records = jsonl(out)
    repeat = firings_of(records, "repeat")
    assert [(r["trajectory"], r["step"], r["fingerprint"]) for r in repeat] == [
        ("session-7f3a#turn2", 2, GO_FINGERPRINT)
    ]
    summaries = {r["trajectory"]: r for r in records if r.get("summary")}
    assert summaries["session-7f3a#turn1"]["triggered"] is False


def test_repeat_threshold_flag_fires_earlier():
    code, out, _ = run(REPEAT, "--output", "json", "--repeat-threshold", "2")
    assert code == 0
    assert [r["step"] for r in firings_of(jsonl(out), "repeat")][:1] == [3]


def test_repeat_threshold_from_the_profile_is_used_and_the_flag_wins(tmp_path):
    config = tmp_path / "profiles.json"
    config.write_text(json.dumps({"profiles": {"lax": {"loopGuard": {"repeatThreshold": 4}}}}))
    code, out, _ = run(REPEAT, "--output", "json", "--config", config, "--profile", "lax")
    assert code == 0
    assert firings_of(jsonl(out), "repeat") == []  # only 3 occurrences
    code, out, _ = run(
        REPEAT,
        "--output",
        "json",
        "--config",
        config,
        "--profile",
        "lax",
        "--repeat-threshold",
        "3",
    )
    assert [r["step"] for r in firings_of(jsonl(out), "repeat")] == [5]


def test_check_every_flag():
    code, out, _ = run(EXPLORATION, "--output", "json")
    assert code == 0
    assert [r["step"] for r in firings_of(jsonl(out), "check-every")] == [19]
    code, out, _ = run(EXPLORATION, "--output", "json", "--check-every", "10")
    assert [r["step"] for r in firings_of(jsonl(out), "check-every")] == [9, 19]
    code, out, _ = run(EXPLORATION, "--output", "json", "--check-every", "0")
    assert firings_of(jsonl(out), "check-every") == []


def test_detector_flag_turns_a_detector_off_in_any_spelling():
    code, out, _ = run(IDENTICAL, "--output", "json")
    assert code == 0
    assert firings_of(jsonl(out), "identical-call")
    for spelling in ("identical-call", "identicalCall", "identical_call"):
        code, out, _ = run(IDENTICAL, "--output", "json", "--detector", f"{spelling}=off")
        assert code == 0
        assert firings_of(jsonl(out), "identical-call") == []


def test_a_real_judge_gives_each_firing_its_verdict(monkeypatch):
    verdict = {
        "stuck": True,
        "confidence": 0.9,
        "reason": "yaml is not installed, and run_app.py is re-run unchanged.",
        "try_instead": "pip install pyyaml",
    }
    with ModelServer() as server:
        server.add(text(json.dumps(verdict)), text(json.dumps(verdict)))
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        code, out, _ = run(REPEAT, "--output", "json", "--judge", "anthropic/judge-model")
        code_text, out_text, _ = run(REPEAT, "--judge", "anthropic/judge-model")
    assert code == 0 and code_text == 0
    (firing,) = firings_of(jsonl(out), "repeat")
    assert {k: firing["verdict"][k] for k in verdict} == verdict
    assert firing["verdict"]["model"] == "anthropic/judge-model"
    assert server.requests[0].model == "judge-model"
    assert YAML_FINGERPRINT.split(": ", 1)[1] in json.dumps(server.requests[0].messages)
    assert "→ stuck (0.90): yaml is not installed" in out_text
    assert "try instead: pip install pyyaml" in out_text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.jsonl"], "missing.jsonl: no such file"),
        ([str(DATA / "broken.jsonl")], "broken.jsonl:2: not a JSON object"),
        ([str(REPEAT), "--detector", "telepathy=off"], "unknown detector 'telepathy'"),
        ([str(REPEAT), "--detector", "alternation=maybe"], "write NAME=on or NAME=off"),
        ([str(REPEAT), "--output", "xml"], "--output 'xml'"),
        ([str(REPEAT), "--judge", "nowhere/judge-1"], "unknown provider 'nowhere'"),
        ([str(REPEAT), "--judge", "anthropic/claude-opus-5-5"], "set ANTHROPIC_API_KEY"),
    ],
)
def test_errors_are_one_line_and_exit_2(args, message):
    code, out, err = run(*args)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert message in err


# ---------------------------------------------------------------- baselines


def test_baselines_replay_the_peers_rules_at_their_documented_steps():
    (trajectory,) = load_trajectories(IDENTICAL)  # six identical calls, same output
    breaker = BASELINES["retry-loop-breaker"].run(trajectory.steps)
    assert [(f.step, f.action) for f in breaker] == [(3, "stop"), (4, "stop"), (5, "stop")]
    goa = goa_loop_detection(trajectory.steps)
    assert [f.step for f in goa if f.rule == "max-tool-repeat-consecutive"] == [2, 3, 4, 5]
    anti = anti_looping_guardrail(trajectory.steps)
    assert [f.step for f in anti if f.rule == "same-call-3-in-5"] == [2, 3, 4, 5]


def test_the_anti_looping_guardrails_budget_and_failure_rules():
    (trajectory,) = load_trajectories(EXPLORATION)  # 25 distinct successful calls
    anti = anti_looping_guardrail(trajectory.steps)
    assert [(f.step, f.rule, f.action) for f in anti] == [
        (11, "turn-budget-warning", "warn"),
        (14, "turn-budget", "stop"),
    ]
    goa = goa_loop_detection(trajectory.steps)
    assert [(f.step, f.rule) for f in goa] == [(14, "max-consecutive-tool-rounds")]
    (repeat,) = load_trajectories(REPEAT)
    rules = {(f.step, f.rule) for f in anti_looping_guardrail(repeat.steps)}
    # Three failures of one command; the raw errors differ (temp dirs), so the
    # exact-match "identical error twice" rule never fires.
    assert (5, "command-failed-3x") in rules
    assert not any(rule == "identical-error-twice" for _, rule in rules)


# ---------------------------------------------------------------- the benchmark


def test_benchmark_scores_a_small_corpus(tmp_path, monkeypatch):
    import importlib.util
    import sys

    script = Path(__file__).parents[2] / "benchmarks" / "corpus_eval.py"
    spec = importlib.util.spec_from_file_location("corpus_eval", script)
    assert spec is not None and spec.loader is not None
    corpus_eval = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "corpus_eval", corpus_eval)  # dataclasses look it up
    spec.loader.exec_module(corpus_eval)
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(REPEAT.read_text() + PRODUCTIVE.read_text())
    doc = tmp_path / "bench.md"
    doc.write_text(f"# Bench\n{corpus_eval.DOC_START}\nold\n{corpus_eval.DOC_END}\nafter\n")
    printed: list[str] = []
    code = corpus_eval.main(
        [str(corpus), "--out", str(tmp_path / "out"), "--update-doc", str(doc)], printed.append
    )
    assert code == 0
    output = "\n".join(printed)
    # Caught at the labelled step; stopping there saves the one call after it
    # (27 characters of output ≈ 6 tokens); quiet on the productive run.
    assert "| **caretz guard** | 1 | 0; 0 | 0 | 0 | 1 (6) | 0 | 0 | 0.0 |" in output
    # The anti-looping guardrail stops the loop at step 5 too, but also the productive run: its
    # test command fails three times, each time with a different error.
    assert "| **anti-looping-no-budget** | 1 | 0; 0 | 0 | 0 | 1 (6) | 1 | 1 | – |" in output
    # The scripted scenarios sit next to the corpus: the poll and the converging test
    # cycle never stop with a judge that says "not stuck".
    assert "### Scripted scenarios" in output
    poll = next(line for line in output.splitlines() if "a poll that finishes" in line)
    assert poll.split(" | ")[4] == "never"
    updated = doc.read_text()
    assert "old" not in updated and updated.endswith(f"{corpus_eval.DOC_END}\nafter\n")
    assert "| **caretz guard** | 1 |" in updated
