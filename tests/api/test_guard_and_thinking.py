"""What stream() and run() say of the loop guard and of the model's reasoning."""

from __future__ import annotations

import json

import pytest

from caretz.api import Finished, GuardNotice, GuardVerdict, ThinkingDelta, Usage
from tests.e2e.test_loop_guard import GO_TEST, GO_TEST_SCRIPT, JUDGE, STUCK
from tests.modelserver import Reply, text, tool


def test_the_guards_notices_stream_and_its_verdicts_are_in_the_result(
    server, open_session, workspace, env
):
    script = workspace / "gotest.sh"
    script.write_text(GO_TEST_SCRIPT)
    script.chmod(0o755)
    config = workspace.parent / "judged.json"
    judge = {"loopGuard": {"judge": {"model": f"anthropic/{JUDGE}"}}}
    config.write_text(json.dumps({"profiles": {"general": judge}, "prices": PRICES}))
    server.add(*[tool("bash", command=GO_TEST) for _ in range(6)])
    server.add(text("testDB is still undefined; I need the build tags."))
    server.add(*[text(json.dumps(STUCK), usage=(1000, 50, 0)) for _ in range(2)], model=JUDGE)

    session = open_session(loop_guard="active", config=config)
    events = list(session.stream("make the integration tests pass"))

    result = events[-1].result if isinstance(events[-1], Finished) else None
    assert result is not None
    assert (result.status, result.exit_code) == ("loop_guard", 3)
    assert result.text == "testDB is still undefined; I need the build tags."
    kinds = [e.kind for e in events if isinstance(e, GuardNotice)]
    assert "redirected" in kinds and "stopped" in kinds
    assert kinds.index("redirected") < kinds.index("stopped")
    redirected = next(e for e in events if isinstance(e, GuardNotice) and e.kind == "redirected")
    assert STUCK["try_instead"] in redirected.text  # the note the model was sent
    assert [v.action for v in result.guard_verdicts] == ["redirect", "stop"]
    first = result.guard_verdicts[0]
    assert isinstance(first, GuardVerdict)
    assert (first.stuck, first.confidence, first.reason) == (True, 0.9, STUCK["reason"])
    assert first.model == f"anthropic/{JUDGE}" and first.applied
    assert result.to_dict()["guard_verdicts"][0]["try_instead"] == STUCK["try_instead"]
    # What the run used counts the judge's two calls, and shows them apart.
    assert result.judge_usage == Usage(input_tokens=2000, output_tokens=100)
    assert result.usage == Usage(input_tokens=7 * 100 + 2000, output_tokens=7 * 20 + 100)
    assert result.judge_cost_usd == pytest.approx(2000 * 1e-6 + 100 * 5e-6)
    assert result.cost_usd == pytest.approx(700 * 3e-6 + 140 * 15e-6 + 0.0025)


PRICES = {
    "anthropic/claude-test": {"input": 3.0, "output": 15.0},
    f"anthropic/{JUDGE}": {"input": 1.0, "output": 5.0},
}


def test_the_models_reasoning_streams_as_thinking(server, open_session):
    server.add(Reply(thinking="Check the notes first.", text="Done."))
    events = list(open_session().stream("hello"))
    thinking = "".join(e.text for e in events if isinstance(e, ThinkingDelta))
    assert thinking == "Check the notes first."
