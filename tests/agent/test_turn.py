"""The turn loop in process: a scripted model, real tools in a tmp dir, the real guard.

Every test asserts on what the provider received: the requests are what a turn
does, as the model sees it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from caretz.agent.agent import Agent
from caretz.agent.driver import run_with_auto_resume
from caretz.agent.limits import UsageLimits
from caretz.agent.outcomes import SKIPPED_AFTER_STOP
from caretz.agent.parts import AgentConfig, AgentParts
from caretz.guard.config import LoopGuardConfig
from caretz.guard.guard import LoopGuard
from caretz.guard.model import Verdict
from caretz.guard.seam import Guard, NullGuard
from caretz.guard.text_loop import TextLoopSettings
from caretz.messages import Message, ModelRequest
from caretz.permissions.settings import DISALLOWED_SOURCE, rules_from_disallowed_tools
from caretz.runtime.permissions import build_tools
from caretz.session.events import EventLog
from caretz.tools.base import ToolContext
from caretz.tools.permission import SessionPermissions
from tests.scripted import (
    NOT_STUCK,
    Reply,
    ScriptedJudge,
    ScriptedProvider,
    answer,
    bash,
    call,
    calls,
)

TASK = "make the integration tests pass"
SYSTEM = "You are caretz, a coding agent."
# The same failure every time, as `go test` prints it; the guard normalizes the line number.
FAILING = "printf '/tmp/go-build123/db_test.go:12:3: undefined: testDB\\n' >&2; exit 1"
STUCK = Verdict(True, 0.9, "testDB sits behind a build tag.", "run go test -tags integration.")
NOTE_START = "[loop guard] Automated message from caretz, not from the user."
REPORT_START = f"{NOTE_START} This turn is still stuck after the earlier note"


class Events:
    def __init__(self) -> None:
        self.all: list[dict[str, Any]] = []

    def of(self, type: str) -> list[dict[str, Any]]:
        return [event for event in self.all if event["type"] == type]


def make_agent(
    tmp_path: Path,
    provider: ScriptedProvider,
    *,
    mode: str = "off",
    judge: ScriptedJudge | None = None,
    rules: dict[str, list[str]] | None = None,
    limits: UsageLimits | None = None,
    model_ref: str = "test/model",
    **guard_settings: Any,
) -> tuple[Agent, Events]:
    events = Events()
    log = EventLog(None)
    log.subscribe(lambda record: events.all.append(record.to_dict()))
    config = LoopGuardConfig(mode=mode, **guard_settings)
    guard: Guard = NullGuard()
    if mode != "off":
        guard = LoopGuard(config, judge or ScriptedJudge(), log.emit)
    denies = rules_from_disallowed_tools(rules, DISALLOWED_SOURCE)
    permissions = SessionPermissions(tmp_path, profile_rules=denies, emit=log.emit)
    agent = Agent(
        AgentConfig(
            model_id="model-1",
            model_ref=model_ref,
            system=SYSTEM,
            limits=limits or UsageLimits(),
        ),
        AgentParts(
            provider=provider,
            tools=build_tools(permissions),
            tool_ctx=ToolContext(workspace=tmp_path),
            log=log,
            guard=guard,
        ),
    )
    return agent, events


def contents(request: ModelRequest) -> list[str]:
    return [message.content for message in request.messages]


def last(request: ModelRequest) -> Message:
    return request.messages[-1]


def is_note(message: Message) -> bool:
    return message.role == "user" and message.content.startswith(NOTE_START)


# ---------------------------------------------------------------- plain turns


def test_a_plain_answer_is_one_request(tmp_path: Path):
    provider = ScriptedProvider(answer("Hello."))
    agent, events = make_agent(tmp_path, provider)

    result = agent.run_turn("hi")

    assert (result.status, result.exit_code, result.text) == ("done", 0, "Hello.")
    (request,) = provider.requests
    assert request.system == SYSTEM and request.model == "model-1"
    assert [(m.role, m.content) for m in request.messages] == [("user", "hi")]
    assert {spec.name for spec in request.tools} >= {"bash", "read", "write", "edit"}
    assert request.tool_choice is None
    assert [(m.role, m.content) for m in agent.conversation.messages] == [
        ("user", "hi"),
        ("assistant", "Hello."),
    ]
    assert [e["type"] for e in events.all] == [
        "Turn.Started",
        "Model.Request",
        "Model.Response",
        "Turn.Ended",
    ]


def test_a_tool_round_runs_the_tool_and_sends_its_result(tmp_path: Path):
    provider = ScriptedProvider(bash("printf made > out.txt && cat out.txt"), answer("Done."))
    agent, _ = make_agent(tmp_path, provider)

    result = agent.run_turn("make a file")

    assert result.status == "done" and result.tool_calls == 1
    assert (tmp_path / "out.txt").read_text() == "made"
    second = provider.requests[1]
    assert [m.role for m in second.messages] == ["user", "assistant", "tool"]
    tool_result = last(second)
    assert tool_result.content == "made" and not tool_result.is_error
    assert tool_result.tool_call_id == second.messages[1].tool_calls[0].id


# ---------------------------------------------------------------- the redirect note


def test_the_note_ends_every_remaining_request_and_is_never_stored(tmp_path: Path):
    provider = ScriptedProvider(
        *[bash(FAILING) for _ in range(3)],  # the third failure asks the judge: stuck
        bash("ls"),
        answer("Tried a different way."),
    )
    judge = ScriptedJudge(STUCK)
    agent, events = make_agent(tmp_path, provider, mode="active", judge=judge)

    result = agent.run_turn(TASK)

    assert result.status == "done"
    (redirected,) = events.of("LoopGuard.Redirected")
    note = redirected["note"]
    assert note.startswith(NOTE_START)
    assert "The same failure has occurred 3 times: Bash: <path>/db_test.go:N:" in note
    assert f'The user\'s request for this turn: "{TASK}"' in note
    assert not any(is_note(m) for r in provider.requests[:3] for m in r.messages)
    for request in provider.requests[3:]:
        assert last(request) == Message(role="user", content=note)
        assert sum(is_note(m) for m in request.messages) == 1
    assert not any(is_note(m) for m in agent.conversation.messages)
    # The next turn starts without it.
    provider.add(answer("Sure."))
    agent.run_turn("thanks, now the docs")
    assert last(provider.requests[-1]).content == "thanks, now the docs"
    assert not any(is_note(m) for m in provider.requests[-1].messages)


def test_a_stop_sends_one_last_request_without_tools_and_with_the_report_instruction(
    tmp_path: Path,
):
    provider = ScriptedProvider(
        *[bash(FAILING) for _ in range(5)],
        # The sixth failure ends the turn: the call queued after it never runs.
        calls(call("bash", command=FAILING), call("bash", command="touch ran.txt")),
        answer("Report: testDB is still undefined; I need the build tags."),
    )
    agent, events = make_agent(tmp_path, provider, mode="active", judge=ScriptedJudge(STUCK, STUCK))

    result = agent.run_turn(TASK)

    assert (result.status, result.exit_code) == ("loop_guard", 3)
    assert result.text.startswith("Report:")
    assert result.message == events.of("LoopGuard.Stopped")[0]["notice"]
    assert "Reply to carry on from there." in result.message
    final = provider.requests[-1]
    assert len(provider.requests) == 7
    assert final.tool_choice == "none" and final.tools  # declared, but not to be called
    assert [r.tool_choice for r in provider.requests[:-1]] == [None] * 6
    note, instruction = final.messages[-2:]
    assert is_note(note)
    assert instruction.role == "user" and instruction.content.startswith(REPORT_START)
    assert "Do not call any tools" in instruction.content
    # The queued call was answered without running, so the history stays valid.
    skipped = [m for m in final.messages if m.role == "tool"][-1]
    assert skipped.content == SKIPPED_AFTER_STOP and not (tmp_path / "ran.txt").exists()
    assert not any(m.content.startswith(REPORT_START) for m in agent.conversation.messages)


def test_shadow_mode_changes_nothing_in_the_requests(tmp_path: Path):
    script = [*[bash(FAILING) for _ in range(6)], answer("Gave up.")]
    watched = ScriptedProvider(*script)
    judge = ScriptedJudge(STUCK, STUCK)
    agent, events = make_agent(tmp_path, watched, mode="shadow", judge=judge)
    unwatched = ScriptedProvider(*script)
    plain, _ = make_agent(tmp_path, unwatched)

    result = agent.run_turn(TASK)
    plain.run_turn(TASK)

    assert result.status == "done" and len(judge.summaries) == 2
    assert [e["action"] for e in events.of("LoopGuard.Judged")] == ["redirect", "stop"]
    assert len(watched.requests) == len(unwatched.requests) == 7
    for seen, unseen in zip(watched.requests, unwatched.requests, strict=True):
        assert [(m.role, m.content) for m in seen.messages] == [
            (m.role, m.content) for m in unseen.messages
        ]
        assert seen.tool_choice is None


# ---------------------------------------------------------------- a looping stream


def test_a_looping_stream_is_cut_and_the_next_request_carries_the_note(tmp_path: Path):
    unit = "I will now check the configuration file once more to be sure. "
    provider = ScriptedProvider(
        Reply(text=unit * 9, chunks=[unit] * 9),
        answer("The configuration is fine."),
    )
    agent, events = make_agent(tmp_path, provider, mode="active")

    result = agent.run_turn("check the config")

    assert result.status == "done" and result.text == "The configuration is fine."
    assert provider.closed_early == 1  # the stream was closed at the fifth repeat
    second = provider.requests[1]
    cut = second.messages[1]
    streamed, marker = cut.content.split("\n[stream stopped by the loop guard: ")
    assert cut.role == "assistant" and streamed == unit * 5  # kept up to the cut
    assert marker.startswith("Your answer started repeating the same text (5 times")
    assert is_note(last(second))
    assert "A loop check on this turn's activity found it going in circles. Your answer" in (
        last(second).content
    )
    assert events.of("LoopGuard.Redirected")[0]["detector"] == "stream-text"


def test_a_looping_final_report_is_cut_and_the_turn_still_ends_with_exit_3(tmp_path: Path):
    # The same paragraph loops three times: the first cut redirects, the second ends
    # the turn, and the tool-less final report that loops again is cut as well.
    unit = "I keep re-reading the configuration file to make sure it is right. "
    looping = Reply(text=unit * 60, chunks=[unit] * 60)
    provider = ScriptedProvider(looping, looping, looping)
    agent, events = make_agent(tmp_path, provider, mode="active")

    result = agent.run_turn("check the config")

    assert (result.status, result.exit_code) == ("loop_guard", 3)
    assert len(provider.requests) == 3 and provider.closed_early == 3
    report = provider.requests[2]
    assert report.tool_choice == "none"  # it was the final report
    streamed, marker = result.text.split("\n[stream stopped by the loop guard: ")
    assert streamed == unit * 5  # the report is kept up to the cut
    assert marker.startswith("Your answer started repeating the same text (5 times")
    assert agent.conversation.messages[-1].content == result.text
    (cut,) = events.of("LoopGuard.Cut")
    assert cut["detector"] == "stream-text" and "strike 3/3" in cut["headline"]
    assert len(events.of("LoopGuard.Stopped")) == 1
    assert result.message == events.of("LoopGuard.Stopped")[0]["notice"]


@pytest.mark.parametrize(
    ("mode", "watched"),
    [("off", {}), ("shadow", {}), ("active", {"models": ["strata/*"]})],
    ids=["off", "shadow", "active-but-not-watching-this-model"],
)
def test_a_reply_repeating_a_short_sentence_ends_the_turn_whatever_the_guard(
    tmp_path: Path, mode: str, watched: dict[str, Any]
):
    sentence = "I can help you with that. "  # 26 characters: shorter than minPeriod
    chunks = [sentence[i : i + 5] for i in range(0, len(sentence), 5)] * 400
    provider = ScriptedProvider(Reply(text=sentence * 400, chunks=chunks))
    agent, events = make_agent(tmp_path, provider, mode=mode, **watched)

    result = agent.run_turn("what can you do?")

    assert (result.status, result.exit_code) == ("loop_guard", 3)
    assert len(provider.requests) == 1 and provider.closed_early == 1
    streamed, marker = result.text.split("\n[stream stopped by the loop guard: ")
    # Cut once 5 blocks of at least 50 characters (2 sentences each) came: 10 sentences.
    assert streamed.count(sentence) in (10, 11) and len(streamed) < 12 * len(sentence)
    assert marker.startswith("the answer repeated the same text 5 times: 'I can help")
    (stopped,) = events.of("LoopGuard.Stopped")
    assert stopped["detector"] == "stream-text" and stopped["mode"] == mode
    assert result.message == stopped["notice"] and "cut it off" in stopped["notice"]
    (response,) = events.of("Model.Response")
    assert response["stop_reason"] == "aborted" and response["message"]["content"] == result.text


def test_stream_text_off_lets_a_repeating_reply_run_to_its_end(tmp_path: Path):
    sentence = "I can help you with that. "
    provider = ScriptedProvider(Reply(text=sentence * 40, chunks=[sentence] * 40))
    agent, _ = make_agent(tmp_path, provider)
    agent.config = dataclasses.replace(agent.config, text_loop=TextLoopSettings(enabled=False))

    result = agent.run_turn("what can you do?")

    assert (result.status, result.text) == ("done", sentence * 40)


# ---------------------------------------------------------------- limits and padding


def test_a_tool_call_limit_ends_the_turn_and_the_unrun_call_is_answered(tmp_path: Path):
    provider = ScriptedProvider(
        calls(call("bash", command="touch one.txt"), call("bash", command="touch two.txt"))
    )
    agent, _ = make_agent(tmp_path, provider, limits=UsageLimits(max_tool_calls=1))

    result = agent.run_turn("make two files")

    assert (result.status, result.exit_code) == ("limit", 4)
    assert "tool call limit reached: 1 of --max-tool-calls 1" in result.message
    assert len(provider.requests) == 1
    assert (tmp_path / "one.txt").exists() and not (tmp_path / "two.txt").exists()
    # The next request (here, the next turn's) answers both calls, the second unrun.
    provider.add(answer("ok"))
    agent.run_turn("go on")
    results = [m for m in provider.requests[-1].messages if m.role == "tool"]
    assert [m.content for m in results] == ["(no output)", SKIPPED_AFTER_STOP]


# ---------------------------------------------------------------- the tool policy


@pytest.mark.parametrize("mode", ["off", "shadow", "active"])
def test_a_disallowed_call_is_a_failed_result_in_every_mode(tmp_path: Path, mode: str):
    (tmp_path / "build").mkdir()
    provider = ScriptedProvider(bash("cd build &&  rm   -rf ../build"), answer("I will not."))
    rules = {"bash": ["rm -rf", "git push --force"]}
    agent, events = make_agent(tmp_path, provider, mode=mode, rules=rules)

    result = agent.run_turn("clean up")

    assert result.status == "done"
    assert (tmp_path / "build").is_dir()  # the command never ran
    refusal = last(provider.requests[1])
    assert refusal.role == "tool" and refusal.is_error
    assert refusal.content.startswith(NOTE_START)
    assert '"rm -rf"' in refusal.content
    assert "loopGuard.detectors.disallowedTools.bash" in refusal.content
    assert "Do not retry it" in refusal.content
    (blocked,) = events.of("LoopGuard.Blocked")
    assert (blocked["detector"], blocked["rule"], blocked["pattern"]) == (
        "disallowed-tools",
        "bash",
        "rm -rf",
    )
    assert blocked["headline"] == 'disallowed-tools: bash matches "rm -rf"'
    (tool_result,) = events.of("Tool.Result")
    assert tool_result["ok"] is False and tool_result["output"] == refusal.content


def test_disallowed_tools_apply_to_models_the_guard_does_not_watch(tmp_path: Path):
    provider = ScriptedProvider(
        calls(
            call("write", path=".env", content="KEY=1"), call("write", path="env.py", content="")
        ),
        answer("done"),
    )
    agent, _ = make_agent(
        tmp_path,
        provider,
        mode="active",
        model_ref="anthropic/claude-opus-5-5",
        models=["strata/*"],
        rules={"write": ["*.env"]},
    )

    agent.run_turn("write the files")

    refused, written = [m for m in provider.requests[1].messages if m.role == "tool"]
    assert refused.is_error and "was refused and did not run" in refused.content
    assert not written.is_error
    assert not (tmp_path / ".env").exists() and (tmp_path / "env.py").exists()


# ---------------------------------------------------------------- auto-resume


def test_auto_resume_runs_the_resume_turn_from_the_stop_decision(tmp_path: Path):
    loop = [bash(FAILING) for _ in range(6)]
    provider = ScriptedProvider(*loop, answer("Report one."), *loop, answer("Report two."))
    agent, events = make_agent(
        tmp_path,
        provider,
        mode="active",
        judge=ScriptedJudge(*[STUCK] * 4),
        detectors={"auto_resume": {"enabled": True, "max_resumes": 1}},
    )

    result = run_with_auto_resume(agent, TASK)

    assert (result.status, result.exit_code, result.text) == ("loop_guard", 3, "Report two.")
    assert result.resume is None  # the one resume is spent
    assert len(provider.requests) == 14
    resume = "loop detected and you were stopped - resume now"
    assert last(provider.requests[7]) == Message(role="user", content=resume)
    (resuming,) = events.of("LoopGuard.Resuming")
    assert (resuming["count"], resuming["max"], resuming["message"]) == (1, 1, resume)
    started = events.of("Turn.Started")
    assert [e["from_user"] for e in started] == [True, False]
    assert events.all.index(resuming) < events.all.index(started[1])


def test_without_a_judge_verdict_the_turn_runs_as_if_unguarded(tmp_path: Path):
    provider = ScriptedProvider(*[bash(FAILING) for _ in range(3)], answer("Done."))
    judge = ScriptedJudge(NOT_STUCK)
    agent, events = make_agent(tmp_path, provider, mode="active", judge=judge)

    assert agent.run_turn(TASK).status == "done"

    assert len(judge.summaries) == 1
    assert events.of("LoopGuard.Judged")[0]["action"] == "continue"
    assert not any(is_note(m) for r in provider.requests for m in r.messages)
