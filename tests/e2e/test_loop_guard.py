"""The loop guard through the real CLI: scripted agent and scripted judge on one server."""

from __future__ import annotations

import json

import pytest

from caretz.session.store import rebuild_history
from tests.e2e.conftest import turn_end, types
from tests.modelserver import Reply, text, tool

JUDGE = "judge-model"
GO_TEST = "./gotest.sh ./db/..."
FINGERPRINT = "Bash: <path>/db_test.go:N: undefined: testDB"

# A fake Go project: `go test` fails on a missing symbol, and each run differs only in
# its temp build dir, the line number and the timing, as real runs do.
GO_TEST_SCRIPT = """#!/usr/bin/env bash
n=$(( $(cat .runs 2>/dev/null || echo 0) + 1 )); echo $n > .runs
dir=$(mktemp -d)
echo "# example.com/shop/db [example.com/shop/db.test]"
echo "$dir/db_test.go:$((10 + n)):9: undefined: testDB"
echo "FAIL	example.com/shop/db [build failed]"
echo "FAIL	example.com/shop/db 0.$((100 + n * 7))s"
exit 1
"""

STUCK = {
    "stuck": True,
    "confidence": 0.9,
    "reason": "testDB is declared in a file with a build tag the test run doesn't set.",
    "try_instead": "run go test with -tags integration, or move testDB out of the tagged file.",
}
NOT_STUCK = {"stuck": False, "confidence": 0.2, "reason": "each run fixes something new"}


def with_judge(mode: str) -> list[str]:
    """Flags for a run with the loop guard in `mode`, judged by the scripted judge model."""
    return ["--loop-guard", mode, "--loop-guard-model", f"anthropic/{JUDGE}"]


def verdict(data: dict) -> Reply:
    return text(json.dumps(data))


@pytest.fixture
def go_project(workspace):
    script = workspace / "gotest.sh"
    script.write_text(GO_TEST_SCRIPT)
    script.chmod(0o755)
    return workspace


def is_note(message: dict) -> bool:
    content = message["content"]
    body = content if isinstance(content, str) else " ".join(b.get("text", "") for b in content)
    return message["role"] == "user" and body.startswith("[loop guard] Automated message")


def test_stuck_twice_redirects_once_then_ends_the_turn_with_a_report(caretz, server, go_project):
    server.add(*[tool("bash", command=GO_TEST) for _ in range(6)])
    server.add(
        text("I changed nothing that worked. testDB is still undefined; I need the build tags.")
    )
    server.add(verdict(STUCK), verdict(STUCK), model=JUDGE)

    run = caretz(
        "-p",
        "make the integration tests pass",
        *with_judge("active"),
    )

    assert run.code == 3, run.stderr
    agent = server.requests_for("claude-test")
    judge = server.requests_for(JUDGE)
    assert len(agent) == 7 and len(judge) == 2
    # The third failure calls the judge; the summary holds the repeated failure.
    assert f"[loop-guard] judging: repeat: 3× {FINGERPRINT}" in run.stderr
    assert "[loop-guard] stuck (0.90) → redirecting" in run.stderr
    assert "  reason: testDB is declared in a file with a build tag" in run.stderr
    assert "  try instead: run go test with -tags integration" in run.stderr
    assert "undefined: testDB" in judge[0].messages[0]["content"]
    # Before the verdict no note; after it, the note rides as its own trailing message.
    assert not any(is_note(m) for r in agent[:3] for m in r.messages)
    for request in agent[3:6]:
        note = request.messages[-1]
        assert is_note(note)
        assert request.messages[-2]["content"][0]["type"] == "tool_result"
        assert sum(is_note(m) for m in request.messages) == 1
    note_text = agent[3].messages[-1]["content"]
    note_text = note_text if isinstance(note_text, str) else note_text[0]["text"]
    assert f"The same failure has occurred 3 times: {FINGERPRINT}." in note_text
    assert "Diagnosis: testDB is declared in a file with a build tag" in note_text
    assert 'The user\'s request for this turn: "make the integration tests pass"' in note_text
    # Stuck again: the last request may not call tools and asks for the report.
    final = agent[6].body
    assert final["tool_choice"] == {"type": "none"}
    assert "[loop-guard] stuck (0.90) → ending the turn" in run.stderr
    assert "I changed nothing that worked" in run.stdout
    events = caretz.events(run.session_id)
    judged = [e for e in events if e["type"] == "LoopGuard.Judged"]
    assert [j["action"] for j in judged] == ["redirect", "stop"]
    assert judged[0]["summary"] == judge[0].messages[0]["content"]
    assert judged[0]["verdict"]["stuck"] is True and judged[0]["mode"] == "active"
    assert judged[0]["note"].startswith("[loop guard] Automated message")
    assert {"LoopGuard.Redirected", "LoopGuard.Stopped"} <= set(types(events))
    assert turn_end(events)["status"] == "loop_guard"
    # The note never enters the stored conversation, so resume is unchanged.
    history = rebuild_history(events)
    assert not any(is_note(m.to_dict()) for m in history.conversation)


def test_a_final_report_that_loops_is_cut_and_the_run_exits_3(caretz, server, go_project):
    paragraph = "I checked the build tags again and testDB is still undefined in db_test.go. "
    server.add(*[tool("bash", command=GO_TEST) for _ in range(6)])
    server.add(text(paragraph * 60))  # the tool-less final report loops
    server.add(verdict(STUCK), verdict(STUCK), model=JUDGE)

    run = caretz("-p", "make the integration tests pass", *with_judge("active"))

    assert run.code == 3, run.stderr
    agent = server.requests_for("claude-test")
    assert len(agent) == 7 and agent[6].body["tool_choice"] == {"type": "none"}
    # The report streamed up to the cut: five copies, not sixty.
    assert run.stdout.count(paragraph) == 5
    assert "→ final report cut off" in run.stderr
    events = caretz.events(run.session_id)
    report = [e for e in events if e["type"] == "Model.Response"][-1]
    assert report["stop_reason"] == "aborted"
    kept, marker = report["message"]["content"].split("\n[stream stopped by the loop guard: ")
    # Cut within the sixth copy: the text streams in 7-character pieces.
    assert kept.startswith(paragraph * 5) and len(kept) < len(paragraph) * 6
    assert marker.startswith("Your answer started repeating")
    (cut,) = [e for e in events if e["type"] == "LoopGuard.Cut"]
    assert cut["detector"] == "stream-text"
    assert turn_end(events)["status"] == "loop_guard"
    assert turn_end(events)["exit_code"] == 3


def test_shadow_mode_judges_and_logs_but_never_changes_the_requests(caretz, server, go_project):
    server.add(*[tool("bash", command=GO_TEST) for _ in range(3)])
    server.add(text("Still failing; giving up for now."))
    server.add(verdict(STUCK), model=JUDGE)

    run = caretz(
        "-p",
        "make the integration tests pass",
        *with_judge("shadow"),
        "--output",
        "detailed",
    )

    assert run.code == 0, run.stderr
    assert "[loop-guard] stuck (0.90) → shadow mode, no redirect" in run.stderr
    assert f"judge: anthropic/{JUDGE}" in run.stderr  # --output detailed: model, latency, tokens
    agent = server.requests_for("claude-test")
    assert not any(is_note(m) for r in agent for m in r.messages)
    assert all("tool_choice" not in r.body for r in agent)
    judged = [e for e in caretz.events(run.session_id) if e["type"] == "LoopGuard.Judged"]
    assert len(judged) == 1 and judged[0]["mode"] == "shadow" and judged[0]["applied"] is False


def test_a_long_productive_turn_is_never_stopped(caretz, server, workspace):
    # 30 calls, each failing with a different error: progress, not a loop.
    steps = [
        tool("bash", command=f"echo 'E{n}: problem number {n} in module_{n}.py' >&2; exit 1")
        for n in range(30)
    ]
    server.add(*steps, text("Fixed them all one by one."))
    server.add(verdict(NOT_STUCK), verdict(NOT_STUCK), verdict(NOT_STUCK), model=JUDGE)

    run = caretz(
        "-p",
        "fix everything",
        *with_judge("active"),
    )

    assert run.code == 0, run.stderr
    assert "Fixed them all one by one." in run.stdout
    assert "[loop-guard] not stuck (0.20) → carrying on" in run.stderr
    assert not any(is_note(m) for r in server.requests_for("claude-test") for m in r.messages)
    events = caretz.events(run.session_id)
    assert "LoopGuard.Redirected" not in types(events) and "LoopGuard.Stopped" not in types(events)


@pytest.mark.parametrize(
    ("judge_reply", "seen"),
    [
        (Reply(text=json.dumps(STUCK), delay_s=3), "no verdict (timeout after 1s) → carrying on"),
        (text("I would say it looks fine, maybe."), "no verdict (unreadable reply"),
        (Reply(status=400, error_message="judge exploded"), "no verdict (error"),
    ],
    ids=["timeout", "garbage", "error"],
)
def test_a_judge_that_fails_never_stops_anything(caretz, server, go_project, judge_reply, seen):
    caretz.write_config({"profiles": {"general": {"loopGuard": {"judgeTimeout": "1s"}}}})
    server.add(*[tool("bash", command=GO_TEST) for _ in range(3)], text("done trying"))
    server.add(judge_reply, model=JUDGE)

    run = caretz(
        "-p",
        "make the tests pass",
        *with_judge("active"),
    )

    assert run.code == 0, run.stderr
    assert seen in run.stderr
    assert not any(is_note(m) for r in server.requests_for("claude-test") for m in r.messages)


def test_without_a_judge_model_the_session_model_judges(caretz, server, go_project):
    server.add(*[tool("bash", command=GO_TEST) for _ in range(3)])
    server.add(verdict(NOT_STUCK))  # the judge call, on the session's own model
    server.add(text("done"))

    run = caretz("-p", "make the tests pass", env={"CARETZ_LOOP_GUARD": "shadow"})

    assert run.code == 0, run.stderr
    judge_request = server.requests_for("claude-test")[3]
    assert "undefined: testDB" in judge_request.messages[0]["content"]
    assert judge_request.body.get("tools") is None


def test_the_models_list_leaves_unlisted_models_unguarded(caretz, server, go_project):
    caretz.write_config(
        {
            "profiles": {
                "general": {"loopGuard": {"mode": "active", "models": ["strata/*", "*/qwen*next*"]}}
            }
        }
    )
    server.add(*[tool("bash", command=GO_TEST) for _ in range(4)], text("gave up"))

    run = caretz("-p", "make the tests pass", "--loop-guard", "active")  # keeps the models list

    assert run.code == 0, run.stderr
    assert len(server.requests) == 5  # no judge call
    assert "judging" not in run.stderr


def test_check_every_flag_asks_the_judge_periodically(caretz, server, workspace):
    server.add(*[tool("bash", command=f"echo step {n}") for n in range(5)], text("done"))
    server.add(verdict(NOT_STUCK), model=JUDGE)

    run = caretz(
        "-p",
        "work",
        *with_judge("shadow"),
        "--loop-guard-check-every",
        "5",
    )

    assert run.code == 0, run.stderr
    assert "[loop-guard] judging: check-every: 5 calls since the last check" in run.stderr
    assert len(server.requests_for(JUDGE)) == 1


def test_an_unknown_judge_model_fails_at_start(caretz, server):
    run = caretz("-p", "hi", "--loop-guard", "shadow", "--loop-guard-model", "nosuch/judge")

    assert run.code == 2
    assert "nosuch" in run.stderr
    assert server.requests == []


def test_secrets_are_redacted_from_the_judge_summary(caretz, server, workspace):
    leak = "echo ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789 >&2; exit 1"
    server.add(*[tool("bash", command=leak) for _ in range(3)], text("done"))
    server.add(verdict(NOT_STUCK), model=JUDGE)

    run = caretz(
        "-p",
        "debug",
        *with_judge("shadow"),
    )

    assert run.code == 0, run.stderr
    summary = server.requests_for(JUDGE)[0].messages[0]["content"]
    assert "abcdefghijklmnopqrstuvwxyz0123456789" not in summary
    assert "[redacted]" in summary


# Shapes the judge summary's own redaction used to miss; caretz.secrets covers them.
OUTPUT_SECRETS = {
    "DJANGO_SECRET_KEY=": "dj4ng0s3cr3tv4luex9zq",
    "DB_PASS=": "hunter2hunter2",
    "hook: https://hooks.slack.com/services/": "T0AAAA0AA/B0BBBB0BB/abcdefghijklmnopqrstuvwx",
    "mysql -u root -p": "Pa55wordHunter9",
    "stripe: ": "sk_live_51Habcdefghijklmnopqrstuv",
}


def test_secrets_in_a_tools_output_never_reach_the_judge(caretz, server, workspace):
    lines = [name + secret for name, secret in OUTPUT_SECRETS.items()]
    (workspace / "deploy.log").write_text("\n".join(lines) + "\n")
    failing = "cat deploy.log >&2; exit 1"
    server.add(*[tool("bash", command=failing) for _ in range(3)], text("done"))
    server.add(verdict(NOT_STUCK), model=JUDGE)

    run = caretz("-p", "deploy", *with_judge("shadow"))

    assert run.code == 0, run.stderr
    (judged,) = server.requests_for(JUDGE)
    sent = json.dumps(judged.body)
    assert "deploy.log" in sent  # the summary holds the failing call and its output
    for secret in OUTPUT_SECRETS.values():
        assert secret not in sent
    assert sent.count("[redacted]") >= len(OUTPUT_SECRETS)
    agent_saw = json.dumps(server.requests_for("claude-test")[-1].body)
    assert "hunter2hunter2" in agent_saw  # the agent's own model still sees the output


def test_auto_resume_sends_a_bounded_number_of_resume_messages(caretz, server, go_project):
    caretz.write_config(
        {
            "profiles": {
                "general": {
                    "loopGuard": {"detectors": {"autoResume": {"enabled": True, "maxResumes": 1}}}
                }
            }
        }
    )
    loop = [tool("bash", command=GO_TEST) for _ in range(6)]
    server.add(*loop, text("Report: stuck on testDB."))  # turn 1: redirected, then stopped
    server.add(*loop, text("Report: still stuck."))  # turn 2: the one automatic resume
    server.add(*[verdict(STUCK) for _ in range(4)], model=JUDGE)

    run = caretz(
        "-p",
        "make the tests pass",
        *with_judge("active"),
    )

    assert run.code == 3, run.stderr
    agent = server.requests_for("claude-test")
    assert len(agent) == 14  # two turns of 7 requests, and no third
    resume = agent[7].messages[-1]
    assert resume["role"] == "user"
    assert resume["content"] == "loop detected and you were stopped - resume now"
    events = caretz.events(run.session_id)
    starts = [e for e in events if e["type"] == "Turn.Started"]
    assert [s["from_user"] for s in starts] == [True, False]


def test_replay_a_session_by_its_id(caretz, server, go_project):
    server.add(*[tool("bash", command=GO_TEST) for _ in range(3)], text("giving up"))
    run = caretz("-p", "make the tests pass")  # the guard is off: nothing judged live

    replay = caretz("guard", "replay", run.session_id, "--output", "json")

    assert replay.code == 0, replay.stderr
    lines = [json.loads(line) for line in replay.stdout.splitlines()]
    firing = next(line for line in lines if line.get("trigger") == "repeat")
    assert firing["step"] == 2 and firing["fingerprint"] == FINGERPRINT
    assert lines[-1]["summary"] is True and lines[-1]["first_trigger_step"] == 2
    shown = caretz("sessions", "show", run.session_id)
    assert "make the tests pass" in shown.stdout and "giving up" in shown.stdout


def test_an_unsure_stuck_verdict_changes_nothing(caretz, server, go_project):
    server.add(*[tool("bash", command=GO_TEST) for _ in range(3)], text("done trying"))
    server.add(verdict({**STUCK, "confidence": 0.3}), model=JUDGE)

    run = caretz(
        "-p",
        "make the tests pass",
        *with_judge("active"),
    )

    assert run.code == 0, run.stderr
    assert "[loop-guard] stuck (0.30) → below judge.minConfidence, carrying on" in run.stderr
    assert not any(is_note(m) for r in server.requests_for("claude-test") for m in r.messages)
    judged = [e for e in caretz.events(run.session_id) if e["type"] == "LoopGuard.Judged"]
    assert judged[0]["action"] == "continue" and judged[0]["unsure"] is True


# ---------------------------------------------------------------- a stop needs a "stuck" verdict

# A deploy that is ready on its 30th status check: until then every check prints the
# same thing and succeeds, as a real poll does.
STATUS_SCRIPT = """#!/usr/bin/env bash
n=$(( $(cat .polls 2>/dev/null || echo 0) + 1 )); echo $n > .polls
if [ "$n" -ge 30 ]; then echo "deploy: done"; else echo "deploy: pending"; fi
"""
POLL_TASK = "deploy the service and wait until it is up"


@pytest.fixture
def deploy_project(workspace):
    script = workspace / "status.sh"
    script.write_text(STATUS_SCRIPT)
    script.chmod(0o755)
    return workspace


def test_a_30_step_poll_judged_not_stuck_finishes_with_at_most_3_judge_calls(
    caretz, server, deploy_project
):
    server.add(*[tool("bash", command="./status.sh") for _ in range(30)])
    server.add(text("The deploy is up."))
    waiting = {"stuck": False, "confidence": 0.2, "reason": "it waits for the deploy"}
    server.add(*[verdict(waiting) for _ in range(3)], model=JUDGE)

    run = caretz("-p", POLL_TASK, *with_judge("active"))

    assert run.code == 0, run.stderr
    assert "The deploy is up." in run.stdout
    judge = server.requests_for(JUDGE)
    assert 1 <= len(judge) <= 3
    assert "the same call returned the same successful output" in judge[0].messages[0]["content"]
    events = caretz.events(run.session_id)
    assert "LoopGuard.Redirected" not in types(events) and "LoopGuard.Stopped" not in types(events)
    assert all(e["error"] is None for e in events if e["type"] == "LoopGuard.Judged")
    assert not any(is_note(m) for r in server.requests_for("claude-test") for m in r.messages)


def test_the_same_poll_judged_stuck_is_redirected_then_stopped(caretz, server, deploy_project):
    server.add(*[tool("bash", command="./status.sh") for _ in range(6)])
    server.add(text("I kept polling; the deploy is still pending."))
    server.add(verdict(STUCK), verdict(STUCK), model=JUDGE)

    run = caretz("-p", POLL_TASK, *with_judge("active"))

    assert run.code == 3, run.stderr
    agent = server.requests_for("claude-test")
    assert len(agent) == 7 and agent[6].body["tool_choice"] == {"type": "none"}
    assert is_note(agent[3].messages[-1])
    judged = [e for e in caretz.events(run.session_id) if e["type"] == "LoopGuard.Judged"]
    assert [j["action"] for j in judged] == ["redirect", "stop"]
    assert "[loop-guard] stuck (0.90) → ending the turn" in run.stderr


def test_identical_failing_calls_judged_stuck_stop_as_before(caretz, server, workspace):
    failing = "echo 'Error: settings.toml not found' >&2; exit 1"
    server.add(*[tool("bash", command=failing) for _ in range(6)])
    server.add(text("settings.toml is missing; I need it from you."))
    server.add(verdict(STUCK), verdict(STUCK), model=JUDGE)

    run = caretz("-p", "start the app", *with_judge("active"))

    assert run.code == 3, run.stderr
    assert len(server.requests_for("claude-test")) == 7
    assert len(server.requests_for(JUDGE)) == 2
    events = caretz.events(run.session_id)
    judged = [e for e in events if e["type"] == "LoopGuard.Judged"]
    assert [j["action"] for j in judged] == ["redirect", "stop"]
    assert "identical-call: 3×" in " ".join(judged[0]["triggers"])


def test_a_text_loop_is_cut_without_any_judge(caretz, server, workspace):
    paragraph = "I will check the configuration file once more to make sure it is right. "
    server.add(text(paragraph * 40), text("The configuration is fine."))

    run = caretz("-p", "check the config", "--loop-guard", "active")

    assert run.code == 0, run.stderr
    assert len(server.requests) == 2  # the agent's two requests; no judge call
    events = caretz.events(run.session_id)
    (redirected,) = [e for e in events if e["type"] == "LoopGuard.Redirected"]
    assert redirected["detector"] == "stream-text" and redirected["judged"] is False
    assert "no_judge" not in redirected  # a stream acts at once, with or without a judge
    assert "The configuration is fine." in run.stdout


def test_without_an_answering_judge_a_poll_is_stopped_by_the_stop_level_and_says_so(
    caretz, server, deploy_project
):
    caretz.write_config({"profiles": {"general": {"loopGuard": {"judgeTimeout": "1s"}}}})
    server.add(*[tool("bash", command="./status.sh") for _ in range(16)])
    server.add(text("Still pending after 16 checks."))
    for _ in range(6):
        server.add(Reply(status=400, error_message="judge unavailable"), model=JUDGE)

    run = caretz("-p", POLL_TASK, *with_judge("active"))

    assert run.code == 3, run.stderr
    events = caretz.events(run.session_id)
    (stopped,) = [e for e in events if e["type"] == "LoopGuard.Stopped"]
    assert stopped["detector"] == "identical-call" and stopped["no_judge"].startswith("error")
    assert "so the loop check acted on its own" in stopped["notice"]
    assert "so the loop check acted on its own" in run.stderr
    assert "→ redirecting (no judge answered: error" in run.stderr


# ---------------------------------------------------------------- slow cycles and drift

DB_ERROR = "KeyError: 'DATABASE_URL'"


@pytest.fixture
def db_project(workspace):
    (workspace / "src").mkdir()
    (workspace / "src" / "db.py").write_text("import os\nURL = os.environ['DATABASE_URL']\n")
    (workspace / "reproduce.py").write_text("import src.db\n")
    return workspace


def judged_triggers(caretz, run) -> list[str]:
    return [e["trigger"] for e in caretz.events(run.session_id) if e["type"] == "LoopGuard.Judged"]


def test_rounds_of_different_commands_ending_in_one_failure_ask_the_judge(
    caretz, server, db_project
):
    # Each round runs the same failure a different way, then edits something unrelated.
    runs = [
        "python reproduce.py 2>&1 | tail -1; exit 1",
        f'echo "FAILED tests/test_db.py::test_connect - {DB_ERROR}"; exit 1',
        "python -c 'import src.db'",
    ]
    for n, command in enumerate(runs):
        server.add(tool("bash", command=command))
        server.add(tool("write", path=f"notes{n}.txt", content=f"attempt {n}\n"))
    server.add(text("The database URL is never set; I need it from you."))
    server.add(verdict(STUCK), model=JUDGE)

    run = caretz("-p", "make the db tests pass", *with_judge("active"))

    assert run.code == 0, run.stderr
    assert f"[loop-guard] judging: rounds: 3 rounds ended in the same failure: {DB_ERROR}" in (
        run.stderr
    )
    assert judged_triggers(caretz, run) == ["rounds"]
    agent = server.requests_for("claude-test")
    assert is_note(agent[5].messages[-1])
    assert "Round after round of calls ends the same way" in str(agent[5].messages[-1])


def test_the_same_reproduction_under_fresh_names_asks_the_judge(caretz, server, db_project):
    server.add(tool("read", path="src/db.py"))
    for n in range(1, 6):
        server.add(
            tool("write", path=f"test_x{n}.py", content="print('connect() returned None')\n")
        )
        server.add(tool("bash", command=f"python test_x{n}.py"))
    server.add(text("It still returns None."))
    server.add(verdict(NOT_STUCK), model=JUDGE)

    run = caretz("-p", "find out why connect() returns None", *with_judge("active"))

    assert run.code == 0, run.stderr
    assert "[loop-guard] judging: no-progress: 8 calls in a row changed no task file" in run.stderr
    assert judged_triggers(caretz, run) == ["no-progress"]
    summary = server.requests_for(JUDGE)[0].messages[0]["content"]
    assert "Task files changed: none." in summary
    assert "Scratch files created this turn and used at most once: test_x1.py" in summary


def test_effort_that_changes_nothing_asks_the_judge_before_check_every(caretz, server, db_project):
    places = [
        ("read", {"path": "src/db.py"}),
        ("bash", {"command": "ls src"}),
        ("read", {"path": "reproduce.py"}),
        ("bash", {"command": "grep -rn DATABASE_URL src"}),
    ]
    order = [0, 1, 2, 3, 1, 0, 3, 2, 0, 2, 1, 3, 2]
    for i in order:
        name, args = places[i]
        server.add(tool(name, **args))
    server.add(text("I looked everywhere."))
    server.add(verdict(STUCK), model=JUDGE)

    run = caretz("-p", "make the db tests pass", *with_judge("active"))

    assert run.code == 0, run.stderr
    (judged,) = [e for e in caretz.events(run.session_id) if e["type"] == "LoopGuard.Judged"]
    assert judged["trigger"] == "no-progress" and judged["step"] == 11  # the 12th call
    assert "## Signs of progress" in judged["summary"]


def test_replay_with_a_judge_prints_each_verdict_once(caretz, server, go_project):
    server.add(*[tool("bash", command=GO_TEST) for _ in range(3)], text("giving up"))
    run = caretz("-p", "make the tests pass")
    server.add(verdict(STUCK), verdict(STUCK), model=JUDGE)

    replay = caretz("guard", "replay", run.session_id, "--judge", f"anthropic/{JUDGE}")

    assert replay.code == 0, replay.stderr
    firings = [line for line in replay.stdout.splitlines() if line.startswith("  step ")]
    verdicts = [line for line in replay.stdout.splitlines() if "→ stuck (0.90)" in line]
    assert len(firings) == 3  # three triggers fired at step 2, and one judge call judged them
    assert len(server.requests_for(JUDGE)) == 1
    assert len(verdicts) == 1
    assert replay.stdout.splitlines().index(verdicts[0]) > replay.stdout.splitlines().index(
        firings[-1]
    )


def test_the_judge_waits_on_a_stalled_stream_only_as_long_as_the_profile_says(
    caretz, server, go_project
):
    """streamIdleTimeout (and firstByteTimeout, maxRetries) hold for the judge's requests
    too: a judge whose stream stalls is given up after two silent attempts, long before its
    own judgeTimeout, and the turn carries on."""
    caretz.write_config(
        {"profiles": {"general": {"streamIdleTimeout": "2s", "loopGuard": {"judgeTimeout": "10m"}}}}
    )
    server.add(*[tool("bash", command=GO_TEST) for _ in range(3)], text("done trying"))
    stalled = Reply(text=json.dumps(STUCK), stall_after_events=3)
    server.add(stalled, stalled, model=JUDGE)

    run = caretz("-p", "make the tests pass", *with_judge("active"))

    assert run.code == 0, run.stderr
    assert len(server.requests_for(JUDGE)) == 2  # one retry, as the session's own requests
    assert "no verdict (error" in run.stderr
    assert "sent nothing for 2s (streamIdleTimeout)" in run.stderr
    assert not any(is_note(m) for r in server.requests_for("claude-test") for m in r.messages)
