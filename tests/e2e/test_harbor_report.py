"""What Harbor's agent reads from a real headless run (caretz/integrations/harbor_report.py):
the tokens and cost with the judge's calls in, the trajectory, and which exits are graded
trials and which are Harbor's auth error. Harbor's own classes check the same in the real
docker trials (tests/harbor/run.sh); here the real CLI's output is read without Harbor."""

from __future__ import annotations

import json

import pytest

from caretz.integrations import harbor_report
from tests.e2e.test_loop_guard import GO_TEST, GO_TEST_SCRIPT, JUDGE, STUCK, with_judge
from tests.modelserver import Reply, error, text

AGENT_USAGE = (100, 20, 40)  # input, output, cache reads
PRICES = {
    "anthropic/claude-test": {"input": 3.0, "output": 15.0, "cacheRead": 0.3},
    f"anthropic/{JUDGE}": {"input": 1.0, "output": 5.0},
}


def test_a_guarded_stop_is_a_graded_trial_whose_tokens_and_cost_count_the_judge(
    caretz, server, workspace
):
    script = workspace / "gotest.sh"
    script.write_text(GO_TEST_SCRIPT)
    script.chmod(0o755)
    caretz.write_config({"prices": PRICES})
    bash = Reply(tool_calls=[("bash", {"command": GO_TEST})], usage=AGENT_USAGE)
    server.add(*[bash] * 6, Reply("the tests still fail on testDB", usage=AGENT_USAGE))
    server.add(*[Reply(json.dumps(STUCK), usage=(1000, 50, 0))] * 2, model=JUDGE)

    run = caretz("-p", "make the tests pass", "--output", "json", *with_judge("active"))
    output = harbor_report.read_output(run.stdout.splitlines())

    assert run.code == 3 and output.result is not None
    assert harbor_report.failure(run.code, output.result) is None
    fields = harbor_report.context_fields(output.result)
    # Seven agent replies and two judge calls; Harbor's input counts the cache reads.
    assert fields["n_input_tokens"] == 7 * (100 + 40) + 2 * 1000
    assert fields["n_cache_tokens"] == 7 * 40
    assert fields["n_output_tokens"] == 7 * 20 + 2 * 50
    judge_cost = 2 * (1000 * 1.0 + 50 * 5.0) / 1e6
    agent_cost = 7 * (100 * 3.0 + 20 * 15.0 + 40 * 0.3) / 1e6
    assert fields["cost_usd"] == pytest.approx(agent_cost + judge_cost)
    judge_share = fields["model_usage"][f"anthropic/{JUDGE}"]
    assert judge_share["n_input_tokens"] == 2000
    assert judge_share["cost_usd"] == pytest.approx(judge_cost)
    assert fields["model_usage"]["anthropic/claude-test"]["cost_usd"] == pytest.approx(agent_cost)
    caretz_part = fields["metadata"]["caretz"]
    assert (caretz_part["status"], caretz_part["exit_code"]) == ("loop_guard", 3)
    assert [v["action"] for v in caretz_part["guard_verdicts"]] == ["redirect", "stop"]
    assert caretz_part["judge"]["cost_usd"] == pytest.approx(judge_cost)

    document = harbor_report.trajectory(output, "0.1.0", "anthropic/claude-test")
    steps = document["steps"]
    assert [s["step_id"] for s in steps] == list(range(1, len(steps) + 1))
    assert steps[0] == {**steps[0], "source": "user", "message": "make the tests pass"}
    agent_steps = [s for s in steps if s["source"] == "agent"]
    assert len(agent_steps) == 7
    first_call = agent_steps[0]
    assert first_call["tool_calls"][0]["arguments"] == {"command": GO_TEST}
    [seen] = first_call["observation"]["results"]
    assert seen["source_call_id"] == first_call["tool_calls"][0]["tool_call_id"]
    assert "undefined: testDB" in seen["content"] and seen["extra"]["ok"] is False
    assert first_call["metrics"]["prompt_tokens"] == 140
    assert agent_steps[-1]["message"] == "the tests still fail on testDB"
    system = [s["message"] for s in steps if s["source"] == "system"]
    assert [m.endswith("stuck → redirect") for m in system].count(True) == 1
    assert [m.endswith("stuck → stop") for m in system].count(True) == 1
    assert any(m.startswith("[loop guard] Automated message") for m in system)
    assert any("so the guard ended it" in m for m in system)
    final = document["final_metrics"]
    assert final["total_prompt_tokens"] == fields["n_input_tokens"]
    assert final["total_cost_usd"] == pytest.approx(agent_cost + judge_cost)
    assert final["extra"]["judge"]["input_tokens"] == 2000


def test_a_refused_or_missing_key_is_an_auth_failure_and_an_unknown_model_is_not(caretz, server):
    server.add(error(401, "invalid x-api-key"))
    refused = caretz("-p", "hi", "--output", "json")
    missing = caretz("-p", "hi", "--output", "json", env={"ANTHROPIC_API_KEY": None})
    server.add(error(404, "model: claude-test"))
    unknown = caretz("-p", "hi", "--output", "json")
    server.add(error(500, "overloaded"), error(500, "overloaded"), error(500, "overloaded"))
    server.add(error(500, "overloaded"))
    broken = caretz("-p", "hi", "--output", "json")

    def kind(run):
        return harbor_report.failure(
            run.code, harbor_report.read_output(run.stdout.splitlines()).result
        )

    assert (refused.code, kind(refused)) == (2, "auth")
    assert (missing.code, kind(missing)) == (2, "auth")
    assert (unknown.code, kind(unknown)) == (2, "model")
    assert (broken.code, kind(broken)) == (1, "error")


def test_an_output_limit_stop_is_a_graded_trial(caretz, server):
    for _ in range(3):  # the reply, and the two continuations a cut-off answer gets
        server.add(text("the first part of a long answer", stop_reason="max_tokens"))

    run = caretz("-p", "tell me a story", "--output", "json")
    result = harbor_report.read_output(run.stdout.splitlines()).result

    assert run.code == 4 and result is not None and "output limit" in result["message"]
    assert harbor_report.failure(run.code, result) is None


def test_the_exits_that_end_a_run_on_its_terms_are_graded_and_no_result_is_an_error():
    result = {"type": "result", "status": "limit", "message": "the budget was spent"}
    assert harbor_report.failure(4, result) is None
    assert harbor_report.failure(3, {**result, "status": "loop_guard"}) is None
    assert harbor_report.failure(0, None) == "error"  # killed before its result
    assert harbor_report.failure(130, {**result, "status": "interrupted"}) == "error"
    torn = ['{"type": "Turn.Started", "prompt": "x"}', '{"type": "res']
    assert harbor_report.read_output(torn).result is None
