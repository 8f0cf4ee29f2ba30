"""caretz as a Harbor agent, for real: `harbor run` on the docker backend, three tasks, the
agent installed offline from wheels in each task's container, the model a scripted server
on this machine (the containers share its network). One task is solved (reward 1); in the
other the agent repeats a failing check until the loop guard's judge stops it (reward 0, a
graded trial, not an error); in a third the provider refuses the key, which is Harbor's
auth error. Each graded trial's tokens and cost are checked against what the
server answered, the judge's calls in, and its trajectory against Harbor's ATIF model.

Run by tests/harbor/run.sh (which sets up docker, the base image and the wheels), not by
the normal suite: the file's name keeps pytest from collecting it there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from harbor.models.trajectories import Trajectory
from harbor.models.trial.result import TrialResult

from tests.modelserver import ModelServer, RecordedRequest, Reply, error, text

AGENT = "harbor-agent"
JUDGE = "harbor-judge"
AGENT_USAGE = (100, 20, 50)  # input, output, cache reads: each agent reply
JUDGE_USAGE = (1000, 50, 0)
PRICES = {
    f"anthropic/{AGENT}": {"input": 3.0, "output": 15.0, "cacheRead": 0.3},
    f"anthropic/{JUDGE}": {"input": 1.0, "output": 5.0},
}
STUCK = {
    "stuck": True,
    "confidence": 0.9,
    "reason": "check.sh fails the same way each time; nothing was changed between runs.",
    "try_instead": "read check.sh and change what it checks.",
}
HARBOR_WAIT_S = 1500


def needed(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run tests/harbor/run.sh, which sets it up")
    return value


def write_tasks(root: Path, base_image: str) -> Path:
    """Two Harbor tasks on the local base image; their containers on the host network."""
    tasks = root / "tasks"
    solved = tasks / "write-hello"
    stuck = tasks / "fix-check"
    refused = tasks / "refused-key"
    for task in (solved, stuck, refused):
        (task / "environment").mkdir(parents=True)
        (task / "tests").mkdir()
        (task / "task.toml").write_text(
            'schema_version = "1.4"\n\n[metadata]\n\n[verifier]\ntimeout_sec = 120.0\n\n'
            "[agent]\ntimeout_sec = 600.0\n\n[environment]\nbuild_timeout_sec = 600.0\n"
        )
        (task / "environment" / "docker-compose.yaml").write_text(
            "services:\n  main:\n    network_mode: host\n"
        )
    (solved / "instruction.md").write_text("Write the word hello into /app/hello.txt.\n")
    (solved / "environment" / "Dockerfile").write_text(f"FROM {base_image}\nWORKDIR /app\n")
    (solved / "tests" / "test.sh").write_text(
        "#!/bin/bash\nmkdir -p /logs/verifier\n"
        'if [ "$(cat /app/hello.txt 2>/dev/null)" = hello ]; then echo 1 > /logs/verifier/reward.txt;'
        " else echo 0 > /logs/verifier/reward.txt; fi\n"
    )
    (stuck / "instruction.md").write_text("Make /app/check.sh pass.\n")
    (stuck / "environment" / "check.sh").write_text(
        "#!/bin/sh\necho 'check: expected 42, got 41'\nexit 1\n"
    )
    (stuck / "environment" / "Dockerfile").write_text(
        f"FROM {base_image}\nWORKDIR /app\nCOPY check.sh /app/check.sh\n"
    )
    (stuck / "tests" / "test.sh").write_text(
        "#!/bin/bash\nmkdir -p /logs/verifier\n"
        "if /app/check.sh; then echo 1 > /logs/verifier/reward.txt;"
        " else echo 0 > /logs/verifier/reward.txt; fi\n"
    )
    (refused / "instruction.md").write_text("Say hello (the provider refuses this key).\n")
    (refused / "environment" / "Dockerfile").write_text(f"FROM {base_image}\nWORKDIR /app\n")
    (refused / "tests" / "test.sh").write_text(
        "#!/bin/bash\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n"
    )
    for script in tasks.glob("*/*/*.sh"):
        script.chmod(0o755)
    return tasks


def first_prompt(request: RecordedRequest) -> str:
    content = request.messages[0]["content"] if request.messages else ""
    if isinstance(content, list):
        return " ".join(str(block.get("text", "")) for block in content)
    return str(content)


def bash(command: str) -> Reply:
    return Reply(tool_calls=[("bash", {"command": command})], usage=AGENT_USAGE)


def replies(request: RecordedRequest) -> Reply | None:
    """Each trial's model, from what the request holds (the two trials run at once)."""
    if request.model == JUDGE:
        return text(json.dumps(STUCK), usage=JUDGE_USAGE)
    prompt = first_prompt(request)
    if "refuses this key" in prompt:
        return error(401, "invalid x-api-key")
    answered = sum(m["role"] == "assistant" for m in request.messages)
    if "hello.txt" in prompt:
        if answered == 0:
            return bash("echo hello > /app/hello.txt")
        return text("I wrote hello into /app/hello.txt.", usage=AGENT_USAGE)
    if "check.sh" in prompt:
        if request.body.get("tool_choice") == {"type": "none"}:
            return text("check.sh still fails: expected 42, got 41.", usage=AGENT_USAGE)
        return bash("/app/check.sh")
    return None


def trial(job: Path, task: str) -> tuple[TrialResult, Path]:
    [folder] = [p for p in job.iterdir() if p.is_dir() and p.name.startswith(task)]
    return TrialResult.model_validate_json((folder / "result.json").read_text()), folder


def agent_calls(server: ModelServer, marker: str) -> list[RecordedRequest]:
    return [r for r in server.requests_for(AGENT) if marker in first_prompt(r)]


def expected_usage(agent: int, judge: int) -> dict[str, Any]:
    tokens_in = agent * (AGENT_USAGE[0] + AGENT_USAGE[2]) + judge * JUDGE_USAGE[0]
    agent_cost = agent * (AGENT_USAGE[0] * 3.0 + AGENT_USAGE[1] * 15.0 + AGENT_USAGE[2] * 0.3)
    judge_cost = judge * (JUDGE_USAGE[0] * 1.0 + JUDGE_USAGE[1] * 5.0)
    return {
        "n_input_tokens": tokens_in,
        "n_cache_tokens": agent * AGENT_USAGE[2],
        "n_output_tokens": agent * AGENT_USAGE[1] + judge * JUDGE_USAGE[1],
        "cost_usd": (agent_cost + judge_cost) / 1e6,
        "judge_cost_usd": judge_cost / 1e6,
    }


def test_harbor_runs_caretz_solved_and_stuck_trials_on_docker(tmp_path: Path) -> None:
    wheels = needed("CARETZ_HARBOR_WHEELS")
    tasks = write_tasks(tmp_path, needed("CARETZ_HARBOR_BASE_IMAGE"))
    config = tmp_path / "profiles.json"
    config.write_text(json.dumps({"prices": PRICES}))
    with ModelServer() as server:
        server.on(replies)
        command = [
            *(str(Path(sys.executable).parent / "harbor"), "run"),
            *("--path", str(tasks), "--env", "docker", "--n-concurrent", "3", "--yes"),
            *("--jobs-dir", str(tmp_path / "jobs"), "--job-name", "caretz"),
            *("--agent", "caretz.integrations.harbor:CaretzAgent", "--model", f"anthropic/{AGENT}"),
            *("--ak", f"wheels={wheels}", "--ak", f"config={config}"),
            *("--ak", "loop_guard=active", "--ak", f"loop_guard_model=anthropic/{JUDGE}"),
            *("--ae", f"ANTHROPIC_BASE_URL={server.url}"),
            *("--ae", "ANTHROPIC_API_KEY=sk-ant-harbor-trial-0123456789"),
        ]
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=HARBOR_WAIT_S, check=False
        )
        job = tmp_path / "jobs" / "caretz"
        said = f"harbor run exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
        assert len(list(job.glob("*/result.json"))) == 3, said
        solved, solved_dir = trial(job, "write-hello")
        stuck, stuck_dir = trial(job, "fix-check")
        refused, _ = trial(job, "refused-key")
        solved_calls = len(agent_calls(server, "hello.txt"))
        stuck_calls = len(agent_calls(server, "check.sh"))
        judge_calls = len(server.requests_for(JUDGE))

    # Both trials finished and were graded: the stuck one is a loop-guard stop, no error.
    for result in (solved, stuck):
        assert result.exception_info is None, result.exception_info
        assert result.agent_result is not None and result.verifier_result is not None
    # A key the provider refuses is Harbor's auth error, not a graded trial.
    assert refused.exception_info is not None
    assert refused.exception_info.exception_type == "AgentAuthenticationError"
    assert "rejected the API key (HTTP 401)" in refused.exception_info.exception_message
    assert solved.verifier_result.rewards == {"reward": 1}
    assert stuck.verifier_result.rewards == {"reward": 0}
    assert solved_calls == 2 and judge_calls == 2 and stuck_calls >= 4

    # Tokens (input counts cache reads, as Harbor's does) and cost, the judge's in.
    solved_want = expected_usage(solved_calls, 0)
    stuck_want = expected_usage(stuck_calls, judge_calls)
    for result, want in ((solved, solved_want), (stuck, stuck_want)):
        context = result.agent_result
        assert context.n_input_tokens == want["n_input_tokens"]
        assert context.n_cache_tokens == want["n_cache_tokens"]
        assert context.n_output_tokens == want["n_output_tokens"]
        assert context.cost_usd == pytest.approx(want["cost_usd"])
    stuck_meta = stuck.agent_result.metadata["caretz"]
    assert stuck_meta["status"] == "loop_guard" and stuck_meta["exit_code"] == 3
    assert stuck_meta["judge"]["cost_usd"] == pytest.approx(stuck_want["judge_cost_usd"])
    assert [v["action"] for v in stuck_meta["guard_verdicts"]] == ["redirect", "stop"]
    assert solved.agent_result.metadata["caretz"]["status"] == "done"
    judge_share = stuck.agent_result.model_usage[f"anthropic/{JUDGE}"]
    assert judge_share.n_input_tokens == judge_calls * JUDGE_USAGE[0]

    # The trajectories: Harbor's model reads them; the prompt, the calls and their results,
    # the guard's verdicts and stop are there, and the totals match the context.
    solved_path = solved_dir / "agent" / "trajectory.json"
    stuck_path = stuck_dir / "agent" / "trajectory.json"
    solved_steps = Trajectory.model_validate_json(solved_path.read_text())
    stuck_steps = Trajectory.model_validate_json(stuck_path.read_text())
    first, call, answer = solved_steps.steps
    assert (first.source, first.message.strip()) == (
        "user",
        "Write the word hello into /app/hello.txt.",
    )
    assert call.tool_calls[0].arguments == {"command": "echo hello > /app/hello.txt"}
    assert call.observation is not None and call.observation.results[0].extra["ok"] is True
    assert answer.message == "I wrote hello into /app/hello.txt."
    assert solved_steps.final_metrics.total_cost_usd == pytest.approx(solved_want["cost_usd"])
    system = [s.message for s in stuck_steps.steps if s.source == "system"]
    assert sum("stuck → redirect" in m for m in system) == 1
    assert sum("stuck → stop" in m for m in system) == 1
    assert any("so the guard ended it" in m for m in system)
    assert stuck_steps.final_metrics.total_prompt_tokens == stuck_want["n_input_tokens"]
    assert stuck_steps.final_metrics.total_cost_usd == pytest.approx(stuck_want["cost_usd"])
    agent_steps = [s for s in stuck_steps.steps if s.source == "agent"]
    assert len(agent_steps) == stuck_calls
    failed = agent_steps[0].observation.results[0]
    assert "expected 42, got 41" in failed.content
