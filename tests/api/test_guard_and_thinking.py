"""What stream() and run() say of the loop guard and of the model's reasoning."""

from __future__ import annotations

import json

from caretz.api import Finished, GuardNotice, GuardVerdict, ThinkingDelta
from tests.e2e.test_loop_guard import GO_TEST, GO_TEST_SCRIPT, JUDGE, STUCK, verdict
from tests.modelserver import Reply, text, tool


def test_the_guards_notices_stream_and_its_verdicts_are_in_the_result(
    server, open_session, workspace, env
):
    script = workspace / "gotest.sh"
    script.write_text(GO_TEST_SCRIPT)
    script.chmod(0o755)
    config = workspace.parent / "judged.json"
    judge = {"loopGuard": {"judge": {"model": f"anthropic/{JUDGE}"}}}
    config.write_text(json.dumps({"profiles": {"general": judge}}))
    server.add(*[tool("bash", command=GO_TEST) for _ in range(6)])
    server.add(text("testDB is still undefined; I need the build tags."))
    server.add(verdict(STUCK), verdict(STUCK), model=JUDGE)

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


def test_the_models_reasoning_streams_as_thinking(server, open_session):
    server.add(Reply(thinking="Check the notes first.", text="Done."))
    events = list(open_session().stream("hello"))
    thinking = "".join(e.text for e in events if isinstance(e, ThinkingDelta))
    assert thinking == "Check the notes first."
