"""LoopGuard end to end: triggers → judge → redirect once → stop; shadow mode; the rules around them."""

from __future__ import annotations

from typing import Any

import pytest

from caretz.guard.config import LoopGuardConfig
from caretz.guard.detector import Detector
from caretz.guard.guard import LoopGuard
from caretz.guard.model import Firing, JudgeResult, ToolObservation, TurnContext, Verdict
from caretz.guard.seam import AutoResume, Block, Continue, Cut, Redirect, Stop, Warn
from caretz.guard.triggers import build_triggers
from caretz.messages import Message, ToolCall, Usage
from caretz.providers.registry import BUILTIN_PROVIDERS, create_provider
from caretz.runtime.judge import model_judge
from caretz.session.records.base import Record
from caretz.session.records.parse import parse_record
from caretz.ui.guard_lines import render_lines
from tests.modelserver import ModelServer, text
from tests.scripted import NOT_STUCK, ScriptedJudge

TASK = "make the integration tests pass"
REASON = "testDB is declared in a file with a build tag the test run doesn't set."
TRY = "run go test with -tags integration, or move testDB out of the tagged file."
STUCK = Verdict(True, 0.9, REASON, TRY)
DOCUMENTED_NOTE = (
    "[loop guard] Automated message from caretz, not from the user. A reviewer model checked "
    "this turn's tool activity and judged it stuck or off track. The same failure has occurred "
    "3 times: Bash: <path>/db_test.go:N: undefined: testDB.\n"
    "Diagnosis: testDB is declared in a file with a build tag the test run doesn't set.\n"
    "Try instead: run go test with -tags integration, or move testDB out of the tagged file.\n"
    'The user\'s request for this turn: "make the integration tests pass"\n'
    "Stop repeating what isn't working and get back to that request. Before your next tool "
    "call, say in one sentence what you will do differently. This note stays at the end of "
    "the conversation for the rest of this turn."
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Events:
    def __init__(self) -> None:
        self.all: list[dict[str, Any]] = []

    def emit(self, record: Record) -> Record:
        """The guard's emit: keeps each record as its log line's dict."""
        self.all.append(record.to_dict())
        return record

    def of(self, type: str) -> list[dict[str, Any]]:
        return [e for e in self.all if e["type"] == type]

    def types(self) -> list[str]:
        return [e["type"] for e in self.all]


class Scripted(Detector):
    """Fires `severity` on chosen hooks; records the verdicts it is told about."""

    def __init__(
        self,
        name: str,
        severity: str,
        hook: str = "after_tool",
        at: tuple = (0,),
        immediate: bool = False,
    ):
        self.name = name
        self.severity = severity
        self.hook = hook
        self.at = at
        self.immediate = immediate
        self.verdicts: list[tuple[str, bool]] = []
        self._calls = 0

    def _fire(self, hook: str, step: int | None = None) -> Firing | None:
        if hook != self.hook:
            return None
        count = self._calls
        self._calls += 1
        if count not in self.at:
            return None
        return Firing(
            detector=self.name,
            fingerprint=f"{self.name}-print",
            headline=f"{self.name}: fired on {hook} #{count}",
            severity=self.severity,  # type: ignore[arg-type]
            step=step,
            message=f"The {self.name} check saw the same thing again.",
            immediate=self.immediate,
        )

    def before_tool(self, call: ToolCall, index: int) -> Firing | None:
        return self._fire("before_tool", index)

    def after_tool(self, obs: ToolObservation) -> Firing | None:
        return self._fire("after_tool", obs.index)

    def on_text(self, text: str) -> Firing | None:
        return self._fire("on_text")

    def on_thinking(self, text: str, now: float) -> Firing | None:
        return self._fire("on_thinking")

    def end_turn(self, final_text: str, progress: bool) -> Firing | None:
        return self._fire("end_turn")

    def after_verdict(self, firing: Firing, verdict: Verdict) -> None:
        self.verdicts.append((firing.detector, verdict.stuck))


def make_guard(
    judge: ScriptedJudge | Any,
    mode: str = "active",
    watch: list[Detector] | None = None,
    triggers_only: bool = True,
    **settings: Any,
) -> tuple[LoopGuard, Events]:
    """A guard in a started turn; `watch` replaces its detectors, `settings` go to its config."""
    config = LoopGuardConfig(mode=mode, **settings)
    if watch is None and triggers_only:
        watch = build_triggers(config)
    events = Events()
    guard = LoopGuard(config, judge, events.emit, clock=Clock(), detectors=watch)
    guard.begin_turn(TurnContext(task=TASK, model_ref="test/model"))
    return guard, events


def go_failure(index: int) -> ToolObservation:
    output = (
        "# example.com/app/db [example.com/app/db.test]\n"
        f"/tmp/go-build{4000 + index}/b001/db_test.go:{11 + index}:{index % 5 + 1}: "
        "undefined: testDB\n"
        "FAIL\texample.com/app/db [build failed]\n"
        f"ok  \texample.com/app/api\t0.0{index + 10}s\n"
    )
    return ToolObservation(
        index=index,
        tool="bash",
        args={"command": "go test ./..."},
        output=output,
        failed=True,
        exit_code=1,
    )


def ok(index: int, command: str = "ls") -> ToolObservation:
    return ToolObservation(
        index=index,
        tool="bash",
        args={"command": command},
        output=f"out {index}\n",
        failed=False,
        exit_code=0,
    )


def run(guard: LoopGuard, observations: list[ToolObservation]) -> list:
    return [guard.after_tool(obs) for obs in observations]


# ---------------------------------------------------------------- redirect, then stop


def test_third_go_failure_asks_the_judge_and_redirects_with_the_documented_note():
    judge = ScriptedJudge(STUCK)
    guard, events = make_guard(judge)
    decisions = run(guard, [go_failure(0), ok(1, "cat db_test.go"), go_failure(2)])
    assert decisions == [Continue(), Continue(), Continue()]
    assert judge.summaries == []

    decision = guard.after_tool(go_failure(3))

    assert decision == Redirect(DOCUMENTED_NOTE)
    assert judge.timeouts == [15.0]
    (judging,) = events.of("LoopGuard.Judging")
    assert judging["headline"] == "repeat: 3× Bash: <path>/db_test.go:N: undefined: testDB"
    (judged,) = events.of("LoopGuard.Judged")
    assert judged["summary"] == judge.summaries[0]
    assert judged["trigger"] == "repeat"
    assert judged["verdict"] == STUCK.to_dict()
    assert (judged["model"], judged["latency_s"], judged["error"]) == ("test/judge", 2.3, None)
    assert judged["usage"]["input_tokens"] == 1204
    assert (judged["mode"], judged["action"], judged["note"]) == (
        "active",
        "redirect",
        DOCUMENTED_NOTE,
    )
    assert events.of("LoopGuard.Redirected")[0]["note"] == DOCUMENTED_NOTE
    assert (
        render_lines(parse_record(judged), detailed=False)[0]
        == "[loop-guard] stuck (0.90) → redirecting"
    )


def test_redirect_once_then_stuck_again_ends_the_turn():
    judge = ScriptedJudge(STUCK, STUCK)
    guard, events = make_guard(judge)
    decisions = run(guard, [go_failure(i) for i in range(6)])

    assert isinstance(decisions[2], Redirect)
    assert decisions[3:5] == [Continue(), Continue()]
    assert isinstance(decisions[5], Stop)
    assert guard.stopped
    assert "Reply to carry on from there." in decisions[5].notice
    assert events.of("LoopGuard.Stopped")[0]["notice"] == decisions[5].notice
    assert events.of("LoopGuard.Judged")[1]["action"] == "stop"
    # After the stop nothing more is judged; the final request goes without tools.
    assert run(guard, [go_failure(i) for i in range(6, 12)]) == [Continue()] * 6
    assert len(judge.summaries) == 2
    assert "Do not call any tools" in decisions[5].report_instruction


def test_after_the_stop_only_a_looping_stream_is_acted_on():
    guard, events = make_guard(ScriptedJudge(STUCK, STUCK), triggers_only=False)
    assert isinstance(run(guard, [go_failure(i) for i in range(6)])[-1], Stop)
    # The final report: plain text passes, and nothing is judged any more.
    assert guard.on_text("I changed nothing that worked. ") == Continue()
    line = "Let me think about the build tags once more, carefully.\n"
    decisions = [guard.on_thinking(line) for _ in range(5)]
    assert decisions[:4] == [Continue()] * 4
    cut = decisions[4]
    assert isinstance(cut, Cut) and isinstance(cut.then, Stop)
    assert "reasoning kept repeating the same line" in cut.reason
    assert [e["detector"] for e in events.of("LoopGuard.Cut")] == ["reasoning"]
    assert len(events.of("LoopGuard.Judging")) == 2


def test_the_redirect_is_once_per_turn_and_a_new_turn_gets_its_own():
    # The loop keeps the note for the rest of the turn (tests/agent/test_turn.py);
    # the guard only decides once per turn that there is one.
    guard, _ = make_guard(ScriptedJudge(STUCK, STUCK))
    assert run(guard, [go_failure(i) for i in range(3)])[-1] == Redirect(DOCUMENTED_NOTE)
    assert run(guard, [ok(3), ok(4)]) == [Continue(), Continue()]
    guard.begin_turn(TurnContext(task=TASK, model_ref="test/model"))
    assert not guard.stopped
    assert run(guard, [go_failure(i) for i in range(3)])[-1] == Redirect(DOCUMENTED_NOTE)


# ---------------------------------------------------------------- not stuck / errors


def test_not_stuck_carries_on_and_the_failure_must_repeat_another_3_times():
    judge = ScriptedJudge(NOT_STUCK, NOT_STUCK)
    guard, events = make_guard(judge)
    decisions = run(guard, [go_failure(i) for i in range(9)])
    assert decisions == [Continue()] * 9
    assert [e["step"] for e in events.of("LoopGuard.Judging")] == [2, 5, 8]
    assert "not stuck (0.20): each run fails differently" in judge.summaries[1]


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (JudgeResult(verdict=Verdict(False, 0.0), model="test/judge", latency_s=15.0, usage=Usage(), error="timeout after 15s"),
         "timeout after 15s"),
        (JudgeResult(verdict=Verdict(True, 0.9), model="test/judge", latency_s=1.0, usage=Usage(), error="unreadable reply: hm"),
         "unreadable reply: hm"),
        (RuntimeError("judge exploded"), "error: judge exploded"),
    ],
)  # fmt: skip
def test_a_timeout_error_or_unreadable_reply_is_not_stuck(answer, error: str):
    guard, events = make_guard(ScriptedJudge(answer))
    assert run(guard, [go_failure(i) for i in range(3)]) == [Continue()] * 3
    (judged,) = events.of("LoopGuard.Judged")
    assert judged["error"] == error
    assert judged["verdict"]["stuck"] is False
    assert judged["action"] == "continue"
    assert render_lines(parse_record(judged), False) == [
        f"[loop-guard] no verdict ({error}) → carrying on"
    ]


def test_a_real_judge_replying_garbage_leaves_the_turn_alone(server: ModelServer):
    server.add(text("The agent seems to be doing fine, I suppose."))
    provider = create_provider(
        BUILTIN_PROVIDERS["anthropic"], "sk-ant-test", base_url=server.url, max_retries=0
    )
    judge = model_judge(provider, "claude-judge", "anthropic/claude-judge", "off")
    guard, events = make_guard(judge, judge_timeout="5s")
    assert run(guard, [go_failure(i) for i in range(3)]) == [Continue()] * 3
    (judged,) = events.of("LoopGuard.Judged")
    assert judged["error"].startswith("unreadable reply: The agent seems")
    assert server.requests[0].messages[0]["content"] == judged["summary"]


# ---------------------------------------------------------------- other triggers


def test_failure_rate_asks_the_judge_at_8_of_12():
    judge = ScriptedJudge(NOT_STUCK)
    guard, events = make_guard(judge)
    observations = [
        ToolObservation(
            index=i,
            tool="bash",
            args={"command": f"step {i}"},
            output=f"Error: problem {i}",
            failed=True,
            exit_code=1,
        )
        if i % 3
        else ok(i)
        for i in range(12)
    ]
    run(guard, observations)
    (judging,) = events.of("LoopGuard.Judging")
    assert judging["headline"] == "failure-rate: 8 of the last 12 calls failed"


def test_check_every_asks_every_20_calls_and_0_turns_it_off():
    judge = ScriptedJudge()
    guard, events = make_guard(judge)
    run(guard, [ok(i, f"cat file{i}.py") for i in range(45)])
    assert [e["headline"] for e in events.of("LoopGuard.Judging")] == [
        "check-every: 20 calls since the last check"
    ] * 2
    quiet, quiet_events = make_guard(ScriptedJudge(), check_every=0)
    run(quiet, [ok(i, f"cat file{i}.py") for i in range(45)])
    assert quiet_events.of("LoopGuard.Judging") == []


def test_a_repeat_judge_call_counts_as_the_check_for_check_every():
    judge = ScriptedJudge()
    guard, events = make_guard(judge, check_every=10)
    run(guard, [go_failure(0), go_failure(1), go_failure(2)])  # repeat asks at call 3
    run(guard, [ok(i) for i in range(3, 12)])
    assert len(judge.summaries) == 1  # 9 calls since that check
    guard.after_tool(ok(12))
    assert len(judge.summaries) == 2


def test_a_periodic_check_does_not_delay_the_repeat_of_an_earlier_failure():
    # Two go failures, then the periodic check answers "not stuck": the third
    # occurrence of the failure still asks at once (its count was not restarted).
    judge = ScriptedJudge(NOT_STUCK, NOT_STUCK)
    guard, events = make_guard(judge, check_every=4)
    run(guard, [go_failure(0), go_failure(1), ok(2), ok(3)])
    run(guard, [go_failure(4)])
    assert [e["trigger"] for e in events.of("LoopGuard.Judging")] == ["check-every", "repeat"]
    assert [e["step"] for e in events.of("LoopGuard.Judging")] == [3, 4]
    # That verdict restarted the failure's count and the periodic check's.
    run(guard, [go_failure(5), go_failure(6), ok(7)])
    assert len(judge.summaries) == 2
    run(guard, [go_failure(8)])
    assert [e["trigger"] for e in events.of("LoopGuard.Judging")][2:] == ["repeat"]


def test_several_firings_on_one_result_make_one_judge_call():
    one, two = Scripted("one", "judge", at=(2,)), Scripted("two", "judge", at=(2,))
    judge = ScriptedJudge(NOT_STUCK)
    guard, events = make_guard(judge, watch=[*build_triggers(LoopGuardConfig()), one, two])
    run(guard, [go_failure(i) for i in range(3)])
    assert len(judge.summaries) == 1
    assert [e["detector"] for e in events.of("LoopGuard.Fired")] == ["repeat", "one", "two"]
    (judged,) = events.of("LoopGuard.Judged")
    assert judged["trigger"] == "repeat"
    assert judged["triggers"][1:] == ["one: fired on after_tool #2", "two: fired on after_tool #2"]
    assert ("one", False) in one.verdicts and ("repeat", False) in two.verdicts


def test_every_firing_is_emitted_with_its_fields():
    guard, events = make_guard(ScriptedJudge(), watch=[Scripted("probe", "warn", at=(1,))])
    run(guard, [ok(0), ok(1)])
    (fired,) = events.of("LoopGuard.Fired")
    assert {k: fired[k] for k in ("detector", "fingerprint", "headline", "severity", "step")} == {
        "detector": "probe",
        "fingerprint": "probe-print",
        "headline": "probe: fired on after_tool #1",
        "severity": "warn",
        "step": 1,
    }


# ---------------------------------------------------------------- shadow mode


def test_shadow_mode_judges_and_logs_everything_but_never_changes_a_decision():
    detectors = [
        *build_triggers(LoopGuardConfig()),
        Scripted("blocker", "block", hook="before_tool", at=(0, 1)),
        Scripted("warner", "warn", at=(0,)),
        Scripted("stopper", "stop", at=(4, 8), immediate=True),
    ]
    judge = ScriptedJudge(STUCK, STUCK, STUCK)
    guard, events = make_guard(judge, mode="shadow", watch=detectors)
    decisions = []
    for i in range(9):
        decisions.append(
            guard.before_tool(
                ToolCall(id=f"c{i}", name="bash", arguments={"command": "go test ./..."})
            )
        )
        decisions.append(guard.after_tool(go_failure(i)))
    assert decisions == [Continue()] * 18
    assert not guard.stopped
    assert len(judge.summaries) == 2  # repeat at calls 3 and 6 (call 9 is the stopper's)
    judged = events.of("LoopGuard.Judged")
    assert [(e["action"], e["applied"], e["mode"]) for e in judged] == [
        ("redirect", False, "shadow"),
        ("stop", False, "shadow"),
    ]
    assert judged[0]["note"].startswith("[loop guard] Automated message from caretz")
    for kind in (
        "LoopGuard.Redirected",
        "LoopGuard.Stopped",
        "LoopGuard.Warned",
        "LoopGuard.Blocked",
    ):
        assert events.of(kind) == []
    assert (
        render_lines(parse_record(judged[0]), False)[0]
        == "[loop-guard] stuck (0.90) → shadow mode, no redirect"
    )
    assert (
        render_lines(parse_record(judged[1]), False)[0]
        == "[loop-guard] stuck (0.90) → shadow mode, no stop"
    )
    shadow_lines = [
        line for e in events.of("LoopGuard.Fired") for line in render_lines(parse_record(e), False)
    ]
    assert "[loop-guard] blocker: fired on before_tool #0 → shadow mode, no block" in shadow_lines
    assert "[loop-guard] stopper: fired on after_tool #8 → shadow mode, no stop" in shadow_lines


def test_shadow_mode_leaves_streams_alone():
    detectors = [Scripted("chant", "stop", hook="on_text", at=(0,))]
    guard, _ = make_guard(ScriptedJudge(), mode="shadow", watch=detectors)
    assert guard.on_text("again and again") == Continue()


def test_switching_to_shadow_at_run_time_stops_changing_what_the_agent_sees():
    guard, events = make_guard(ScriptedJudge(STUCK, STUCK, STUCK))
    assert run(guard, [go_failure(i) for i in range(3)])[-1] == Redirect(DOCUMENTED_NOTE)
    guard.mode = "shadow"
    assert run(guard, [go_failure(i) for i in range(3, 6)]) == [Continue()] * 3
    assert not guard.stopped
    # The next turn (the interactive session switches between turns) gets no note.
    guard.begin_turn(TurnContext(task=TASK, model_ref="test/model"))
    assert run(guard, [go_failure(i) for i in range(3)]) == [Continue()] * 3
    assert [e["applied"] for e in events.of("LoopGuard.Judged")] == [True, False, False]


# ---------------------------------------------------------------- severities without the judge


def test_warn_goes_to_the_agent_once_in_active_mode():
    guard, events = make_guard(ScriptedJudge(), watch=[Scripted("budget", "warn", at=(1,))])
    decisions = run(guard, [ok(0), ok(1), ok(2)])
    assert decisions[0] == Continue() and decisions[2] == Continue()
    assert isinstance(decisions[1], Warn)
    assert decisions[1].message.startswith("[loop guard] Automated message from caretz")
    assert "The budget check saw the same thing again." in decisions[1].message
    assert events.of("LoopGuard.Warned")[0]["detector"] == "budget"


def test_block_firings_refuse_the_call_in_active_mode():
    guard, events = make_guard(
        ScriptedJudge(), watch=[Scripted("subagents", "block", hook="before_tool")]
    )
    decision = guard.before_tool(ToolCall(id="c1", name="task", arguments={"agent": "architect"}))
    assert isinstance(decision, Block)
    assert "refused and did not run" in decision.reason
    assert events.of("LoopGuard.Blocked")[0]["detector"] == "subagents"


def test_an_immediate_stop_firing_acts_at_once_like_a_stuck_verdict():
    judge = ScriptedJudge()
    guard, events = make_guard(
        judge, watch=[Scripted("tool-budget", "stop", at=(1, 3), immediate=True)]
    )
    decisions = run(guard, [ok(0), ok(1), ok(2), ok(3)])
    assert judge.summaries == []
    assert isinstance(decisions[1], Redirect)
    assert decisions[1].note.startswith(
        "[loop guard] Automated message from caretz, not from the user. A loop check"
    )
    assert "The tool-budget check saw the same thing again." in decisions[1].note
    assert f'The user\'s request for this turn: "{TASK}"' in decisions[1].note
    assert isinstance(decisions[3], Stop)
    assert [e["judged"] for e in events.of("LoopGuard.Redirected")] == [False]


def test_a_looping_stream_is_aborted_then_redirected_then_stopped():
    guard, _ = make_guard(
        ScriptedJudge(), watch=[Scripted("stream-text", "stop", hook="on_text", at=(1, 2))]
    )
    assert guard.on_text("Let me ") == Continue()
    first = guard.on_text("check again. ")
    assert isinstance(first, Cut)
    assert first.reason == "The stream-text check saw the same thing again."
    assert isinstance(first.then, Redirect)
    assert "The stream-text check saw the same thing again." in first.then.note
    second = guard.on_text("check again. ")
    assert isinstance(second, Cut) and isinstance(second.then, Stop)
    assert "Do not call any tools" in second.then.report_instruction


def test_reasoning_warnings_come_back_from_on_thinking():
    guard, _ = make_guard(
        ScriptedJudge(), watch=[Scripted("reasoning", "warn", hook="on_thinking")]
    )
    assert isinstance(guard.on_thinking("hmm, maybe"), Warn)


def test_a_judge_firing_raised_before_a_call_is_judged_with_its_result():
    judge = ScriptedJudge(STUCK)
    guard, _ = make_guard(judge, watch=[Scripted("probe", "judge", hook="before_tool")])
    assert (
        guard.before_tool(ToolCall(id="c0", name="bash", arguments={"command": "ls"})) == Continue()
    )
    assert judge.summaries == []
    assert isinstance(guard.after_tool(ok(0)), Redirect)
    assert len(judge.summaries) == 1


# ---------------------------------------------------------------- the summary the judge sees


def test_the_judge_sees_a_redacted_summary_built_from_what_the_guard_recorded():
    key = "sk-ant-api03-PlantedKeyThatMustNeverLeave0123456789"
    judge = ScriptedJudge(NOT_STUCK)
    guard, events = make_guard(judge)
    guard.after_response(
        Message(role="assistant", content="Running the tests."),
        Usage(input_tokens=5000, output_tokens=300),
    )
    leaky = ToolObservation(
        index=0, tool="bash", args={"command": f"ANTHROPIC_API_KEY={key} go test ./..."},
        output=go_failure(0).output + f"\nusing key {key}\n", failed=True, exit_code=1,
    )  # fmt: skip
    run(guard, [leaky, go_failure(1), go_failure(2)])
    (summary,) = judge.summaries
    assert TASK in summary
    assert "Running the tests." in summary
    assert "5,000 input / 300 output tokens" in summary
    assert "repeat: 3× Bash: <path>/db_test.go:N: undefined: testDB" in summary
    assert key not in summary and key[:20] not in summary
    assert key not in str(events.all)


# ---------------------------------------------------------------- which turns are watched


def test_models_not_in_the_list_get_an_inactive_turn():
    judge = ScriptedJudge(STUCK)
    events = Events()
    config = LoopGuardConfig(mode="active", models=["strata/*", "*/qwen*next*"])
    guard = LoopGuard(config, judge, events.emit, clock=Clock(), detectors=build_triggers(config))
    for _ in range(2):
        guard.begin_turn(TurnContext(task=TASK, model_ref="anthropic/claude-opus-5-5"))
        assert run(guard, [go_failure(i) for i in range(6)]) == [Continue()] * 6
    assert events.types() == ["LoopGuard.Inactive"]
    assert events.all[0]["model_ref"] == "anthropic/claude-opus-5-5"
    assert judge.summaries == []

    guard.begin_turn(TurnContext(task=TASK, model_ref="strata/small-1"))
    assert isinstance(run(guard, [go_failure(i) for i in range(3)])[-1], Redirect)
    guard.begin_turn(TurnContext(task=TASK, model_ref="qwen3-next-80b"))  # a bare --base-url ID
    assert run(guard, [go_failure(i) for i in range(3)])[-1] == Continue()  # not stuck now
    assert len(judge.summaries) == 2


def test_mode_off_observes_and_emits_nothing():
    judge = ScriptedJudge(STUCK)
    guard, events = make_guard(judge, mode="off")
    assert run(guard, [go_failure(i) for i in range(30)]) == [Continue()] * 30
    assert guard.on_text("x" * 100) == Continue()
    assert guard.after_response(Message(role="assistant", content="done"), Usage()) == Continue()
    assert guard.end_turn("done") == Continue()
    assert events.all == [] and judge.summaries == []


# ---------------------------------------------------------------- end of turn and auto-resume


def test_a_cross_turn_stop_ends_without_resuming():
    guard, _ = make_guard(
        ScriptedJudge(STUCK),
        watch=[Scripted("same-answer", "stop", hook="end_turn")],
        detectors={"auto_resume": {"enabled": True}},
    )
    decision = guard.end_turn("I could not finish.")
    assert isinstance(decision, Stop)
    assert "will not continue this automatically" in decision.notice
    assert decision.resume is None and decision.report_instruction == ""


def test_auto_resume_after_a_loop_stop_up_to_max_resumes():
    settings = {"detectors": {"auto_resume": {"enabled": True, "max_resumes": 2}}}
    judge = ScriptedJudge(*[STUCK] * 20)
    guard, _ = make_guard(judge, **settings)
    resumes = []
    for _ in range(4):
        stop = run(guard, [go_failure(i) for i in range(6)])[-1]
        assert guard.stopped and isinstance(stop, Stop)
        resumes.append(stop.resume)
        message = stop.resume.message if stop.resume else "x"
        guard.begin_turn(TurnContext(task=message, model_ref="test/model", from_user=False))
    message = "loop detected and you were stopped - resume now"
    assert resumes == [AutoResume(message, 1, 2), AutoResume(message, 2, 2), None, None]
    # A turn from the user resets the count.
    guard.begin_turn(TurnContext(task="try the other way", model_ref="test/model"))
    stop = run(guard, [go_failure(i) for i in range(6)])[-1]
    assert isinstance(stop, Stop) and stop.resume == AutoResume(message, 1, 2)


def test_no_auto_resume_unless_enabled():
    guard, _ = make_guard(ScriptedJudge(STUCK, STUCK))
    stop = run(guard, [go_failure(i) for i in range(6)])[-1]
    assert guard.stopped
    assert isinstance(stop, Stop) and stop.resume is None


def test_default_detectors_are_the_triggers_plus_the_peer_detectors():
    guard, events = make_guard(ScriptedJudge(NOT_STUCK), triggers_only=False)
    run(guard, [go_failure(i) for i in range(3)])
    detectors = {e["detector"] for e in events.of("LoopGuard.Fired")}
    assert "repeat" in detectors
    assert len(events.of("LoopGuard.Judging")) <= 3  # one judge call per result at most
