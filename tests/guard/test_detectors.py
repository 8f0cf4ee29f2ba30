"""The peer detectors: what each one must catch, and the near-misses it must leave alone."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pytest
from pydantic import ValidationError

from caretz.guard.calls import AlternationDetector, IdenticalCallDetector, RepeatedErrorDetector
from caretz.guard.config import LoopGuardConfig
from caretz.guard.delegation import DelegationChain, SubagentDetector
from caretz.guard.detector import Detector
from caretz.guard.detectors import build_detectors
from caretz.guard.detectors_config import (
    AlternationConfig,
    DetectorsConfig,
    IdenticalCallConfig,
    ReasoningConfig,
    RepeatedErrorConfig,
    SameAnswerConfig,
    StreamTextConfig,
    SubagentsConfig,
    ToolBudgetConfig,
    ToolRoundsConfig,
)
from caretz.guard.model import Firing, ToolObservation, TurnContext, Verdict
from caretz.guard.normalize import failure_fingerprint
from caretz.guard.progress import NoProgressDetector
from caretz.guard.rounds import RoundsDetector
from caretz.guard.streams import ReasoningDetector, StreamTextDetector
from caretz.guard.text_loop import repeated_tail
from caretz.guard.turns import SameAnswerDetector, ToolBudgetDetector, ToolRoundsDetector
from caretz.messages import Message, ToolCall

PYTEST = {"command": "pytest -x tests/test_db.py"}
FAIL_DB = "tests/test_db.py:12: in test_connect\nE   NameError: name 'testDB' is not defined\n1 failed in 0.31s"


def ctx(from_user: bool = True, agent: str = "main", depth: int = 0) -> TurnContext:
    return TurnContext(
        task="make the tests pass",
        model_ref="test/model",
        from_user=from_user,
        agent_name=agent,
        depth=depth,
    )


def call(tool: str, args: dict[str, Any], output: str = "", failed: bool | None = False):
    return (tool, args, output, failed)


def feed(detector: Detector, calls: Iterable[tuple], start: int = 0) -> list[Firing]:
    """Run calls through before_tool/after_tool; every firing, in order."""
    firings: list[Firing] = []
    for index, (tool, args, output, failed) in enumerate(calls, start):
        for firing in (
            detector.before_tool(ToolCall(id=f"c{index}", name=tool, arguments=args), index),
            detector.after_tool(
                ToolObservation(index=index, tool=tool, args=args, output=output, failed=failed)
            ),
        ):
            if firing is not None:
                firings.append(firing)
    return firings


def started(detector: Detector, context: TurnContext | None = None) -> Detector:
    detector.begin_turn(context or ctx())
    return detector


def summary(firings: Sequence[Firing]) -> list[tuple[str, str, int | None]]:
    return [(f.detector, f.severity, f.step) for f in firings]


# ---------------------------------------------------------------- identical-call


def identical(**overrides: Any) -> IdenticalCallDetector:
    return started(IdenticalCallDetector(IdenticalCallConfig(**overrides)))


def test_identical_call_streak_asks_the_judge_at_three():
    detector = identical()
    firings = feed(detector, [call("bash", PYTEST, FAIL_DB, True)] * 3)
    assert summary(firings) == [("identical-call", "judge", 2)]
    assert firings[0].headline.startswith('identical-call: 3× bash({"command":"pytest -x')
    assert firings[0].fingerprint == 'bash({"command":"pytest -x tests/test_db.py"})'


def test_identical_call_interrupt_streak_stops_without_the_judge():
    detector = identical()
    firings = feed(detector, [call("read", {"path": "a.py"}, "same text")] * 8)
    # The judge is asked at 3 and 6; at 8 the detector acts on its own.
    assert summary(firings) == [
        ("identical-call", "judge", 2),
        ("identical-call", "judge", 5),
        ("identical-call", "stop", 7),
    ]
    assert "8 times in a row" in firings[-1].message


def test_identical_call_interrupt_survives_not_stuck_verdicts():
    detector = identical()
    firings = []
    for index in range(8):
        found = feed(detector, [call("read", {"path": "a.py"}, "same text")], start=index)
        for firing in found:
            detector.after_verdict(firing, Verdict(stuck=False, confidence=0.2))
        firings += found
    assert [f.severity for f in firings] == ["judge", "judge", "stop"]


def test_identical_call_results_ignore_timestamps_and_durations():
    detector = identical()
    outputs = [f"FAILED at 2026-01-0{n}T10:00:0{n}Z after 0.{n}s" for n in range(1, 4)]
    firings = feed(detector, [call("bash", PYTEST, out, True) for out in outputs])
    assert summary(firings) == [("identical-call", "judge", 2)]


def test_polling_with_changing_output_is_never_a_loop():
    detector = identical()
    status = {"command": "gh run view 42 --json status"}
    polls = [call("bash", status, f'{{"status":"in_progress","step":{n}}}') for n in range(30)]
    assert feed(detector, polls) == []


def test_identical_calls_count_regardless_of_output_when_same_result_only_is_off():
    detector = identical(same_result_only=False)
    polls = [call("bash", {"command": "date"}, f"step {n}") for n in range(3)]
    assert summary(feed(detector, polls)) == [("identical-call", "judge", 2)]


def test_identical_call_in_a_rolling_window():
    detector = identical()
    look = call("bash", {"command": "git status"}, "nothing to commit")
    others = [call("read", {"path": f"f{n}.py"}, f"file {n}") for n in range(4)]
    calls = [look, others[0], look, others[1], look, others[2], look, others[3], look]
    firings = feed(detector, calls)
    assert summary(firings) == [("identical-call", "judge", 8)]
    assert "in the last 10 calls" in firings[0].message


def test_identical_call_total_in_the_turn():
    detector = identical()
    look = call("bash", {"command": "git status"}, "nothing to commit")
    calls = []
    for n in range(6):
        calls += [look] + [call("read", {"path": f"f{n}-{k}.py"}, "x") for k in range(2)]
    firings = feed(detector, calls)
    assert summary(firings) == [("identical-call", "judge", 15)]
    assert "6 times this turn" in firings[0].message


def test_identical_call_counts_restart_after_a_verdict_and_a_new_turn():
    detector = identical()
    same = call("bash", PYTEST, FAIL_DB, True)
    first = feed(detector, [same] * 3)
    detector.after_verdict(first[0], Verdict(stuck=False, confidence=0.3))
    assert feed(detector, [same] * 2, start=3) == []
    detector.begin_turn(ctx())
    assert feed(detector, [same] * 2) == []


def test_a_verdict_on_another_check_leaves_the_identical_call_counts_alone():
    detector = identical()
    same = call("bash", PYTEST, FAIL_DB, True)
    assert feed(detector, [same] * 2) == []
    check = Firing(detector="check-every", fingerprint="20 calls", headline="check-every: 20 calls")
    detector.after_verdict(check, Verdict(stuck=False, confidence=0.2))
    assert summary(feed(detector, [same], start=2)) == [("identical-call", "judge", 2)]


def test_identical_call_thresholds_of_zero_turn_checks_off():
    detector = identical(warn_streak=0, max_total=0, window=0, max_in_window=0)
    firings = feed(detector, [call("bash", PYTEST, FAIL_DB, True)] * 8)
    assert summary(firings) == [("identical-call", "stop", 7)]
    detector = identical(warn_streak=0, interrupt_streak=0, max_total=0, window=0)
    assert feed(detector, [call("bash", PYTEST, FAIL_DB, True)] * 20) == []


# ---------------------------------------------------------------- repeated-error


def repeated_error(**overrides: Any) -> RepeatedErrorDetector:
    return started(RepeatedErrorDetector(RepeatedErrorConfig(**overrides)))


def test_the_same_error_on_consecutive_failed_calls():
    detector = repeated_error()
    variants = ["pytest -x tests/test_db.py", "pytest tests/test_db.py", "python -m pytest -x"]
    calls = [call("bash", {"command": v}, FAIL_DB, True) for v in variants]
    firings = feed(detector, calls)
    assert summary(firings) == [("repeated-error", "judge", 2)]
    assert "NameError: name 'testDB' is not defined" in firings[0].headline


def test_only_a_verdict_on_the_same_failure_restarts_the_run_of_errors():
    detector = repeated_error()
    failing = call("bash", PYTEST, FAIL_DB, True)
    not_stuck = Verdict(stuck=False, confidence=0.2)
    feed(detector, [failing] * 2)
    detector.after_verdict(
        Firing(detector="check-every", fingerprint="20 calls", headline="check-every: 20 calls"),
        not_stuck,
    )
    (third,) = feed(detector, [failing], start=2)
    assert third.failure == failure_fingerprint(
        ToolObservation(index=2, tool="bash", args=PYTEST, output=FAIL_DB, failed=True)
    )
    detector.after_verdict(third, not_stuck)
    feed(detector, [failing] * 2, start=3)
    # The repeat trigger's verdict on this same failure restarts the run as well.
    detector.after_verdict(
        Firing(detector="repeat", fingerprint=third.failure, headline="r", failure=third.failure),
        not_stuck,
    )
    assert feed(detector, [failing] * 2, start=5) == []
    assert summary(feed(detector, [failing], start=7)) == [("repeated-error", "judge", 7)]


def test_the_guardrails_setting_of_2_fires_on_the_second_identical_error():
    detector = repeated_error(consecutive=2)
    calls = [call("bash", {"command": "npm install"}, "npm ERR! network timeout", True)] * 2
    assert summary(feed(detector, calls)) == [("repeated-error", "judge", 1)]


def test_a_test_rerun_after_each_real_edit_is_not_a_repeated_error():
    detector = repeated_error()
    calls = []
    for n in range(5):
        calls.append(call("edit", {"path": "db.py", "new": f"attempt {n}"}, "edited db.py"))
        calls.append(call("bash", PYTEST, FAIL_DB, True))
    assert feed(detector, calls) == []


def test_consecutive_failures_with_different_errors_are_progress():
    detector = repeated_error()
    errors = ["TypeError: x", "ValueError: y", "KeyError: 'z'", "AttributeError: w"]
    calls = [call("bash", PYTEST, f"E   {error}\n1 failed", True) for error in errors]
    assert feed(detector, calls) == []


def test_the_same_failed_edit_applied_again():
    detector = repeated_error()
    edit = {"path": "parser.py", "old": "x = 1", "new": "x = (1"}
    rejected = "edit rejected: parser.py:4: SyntaxError: '(' was never closed"
    calls = [
        call("edit", edit, rejected, True),
        call("read", {"path": "parser.py"}, "x = 1\n"),
        call("edit", edit, rejected, True),
    ]
    firings = feed(detector, calls)
    assert summary(firings) == [("repeated-error", "judge", 2)]
    assert "same edit failed 2×" in firings[0].headline


def test_the_same_edit_after_the_file_changed_is_not_flagged():
    detector = repeated_error()
    edit = {"path": "q.py", "old": "run()", "new": "run(Executable())"}
    calls = [
        call("edit", edit, "q.py:5: undefined name 'Executable'\n5: run(Executable())", True),
        call("edit", {"path": "q.py", "old": "import x", "new": "import x, y"}, "edited"),
        call("edit", edit, "q.py:6: undefined name 'Executable'\n6: run(Executable())", True),
    ]
    assert feed(detector, calls) == []


def test_repeated_error_thresholds_of_zero_turn_checks_off():
    detector = repeated_error(consecutive=0, same_edit=0)
    edit = {"path": "a.py", "new": "("}
    assert feed(detector, [call("edit", edit, "SyntaxError: '('", True)] * 6) == []


# ---------------------------------------------------------------- alternation


def alternation(**overrides: Any) -> AlternationDetector:
    return started(AlternationDetector(AlternationConfig(**overrides)))


EDIT_A = call("edit", {"path": "m.py", "old": "import a", "new": "import b"}, "edited m.py")
UNDO_A = call("edit", {"path": "m.py", "old": "import b", "new": "import a"}, "edited m.py")


def test_edit_and_its_undo_in_ping_pong():
    detector = alternation()
    firings = feed(detector, [EDIT_A, UNDO_A] * 3)
    assert summary(firings) == [("alternation", "judge", 5)]
    assert firings[0].headline.startswith("alternation: 2-call cycle ×3: edit(")


def test_a_three_call_cycle_with_stable_results():
    detector = alternation()
    cycle = [
        call("bash", {"command": "git checkout base.py"}, "Updated 1 path"),
        call("bash", {"command": "python apply_fix.py"}, "patched"),
        call("bash", PYTEST, FAIL_DB, True),
    ]
    firings = feed(detector, cycle * 3)
    assert summary(firings) == [("alternation", "judge", 8)]
    assert "3-call cycle" in firings[0].headline


def test_edit_then_test_with_changing_edits_and_results_is_not_a_cycle():
    detector = alternation()
    calls = []
    for n in range(6):
        calls.append(call("edit", {"path": "m.py", "new": f"fix {n}"}, "edited m.py"))
        calls.append(call("bash", PYTEST, f"E   Error number {n}\n1 failed", True))
    assert feed(detector, calls) == []


def test_ping_pong_whose_results_change_is_not_a_cycle():
    detector = alternation()
    calls = []
    for n in range(6):
        calls.append(call("bash", {"command": "sleep 30"}, ""))
        calls.append(call("bash", {"command": "tail -n 3 build.log"}, f"compiled {n * 10}%"))
    assert feed(detector, calls) == []


def test_a_run_of_one_identical_call_is_not_alternation():
    detector = alternation()
    assert feed(detector, [EDIT_A] * 12) == []


def test_alternation_repeats_zero_turns_it_off():
    detector = alternation(repeats=0)
    assert feed(detector, [EDIT_A, UNDO_A] * 6) == []


# ---------------------------------------------------------------- tool-rounds


def tool_round(text: str = "") -> Message:
    return Message(
        role="assistant",
        content=text,
        tool_calls=[ToolCall(id="x", name="read", arguments={"path": "a.py"})],
    )


def test_tool_rounds_without_text_warn_with_the_recovery_message():
    detector = started(ToolRoundsDetector(ToolRoundsConfig(max_rounds=4)))
    firings = [f for f in (detector.after_response(tool_round()) for _ in range(4)) if f]
    assert summary(firings) == [("tool-rounds", "warn", None)]
    assert firings[0].message == ToolRoundsConfig().recovery_message
    assert firings[0].headline.startswith("tool-rounds: 4 tool rounds")


def test_a_word_to_the_user_resets_the_tool_rounds():
    detector = started(ToolRoundsDetector(ToolRoundsConfig(max_rounds=4)))
    messages = [tool_round(), tool_round(), tool_round(), tool_round("Found it; fixing.")] * 3
    assert [f for f in map(detector.after_response, messages) if f] == []


def test_tool_rounds_default_leaves_a_long_turn_alone_and_zero_is_off():
    detector = started(ToolRoundsDetector(ToolRoundsConfig()))
    assert [f for f in (detector.after_response(tool_round()) for _ in range(49)) if f] == []
    off = started(ToolRoundsDetector(ToolRoundsConfig(max_rounds=0)))
    assert [f for f in (off.after_response(tool_round()) for _ in range(500)) if f] == []


# ---------------------------------------------------------------- subagents


def delegate(agent: str) -> ToolCall:
    return ToolCall(id="t", name="task", arguments={"agent": agent, "prompt": "look into it"})


def test_a_circular_hand_off_is_blocked():
    detector = started(SubagentDetector(SubagentsConfig()))
    assert detector.before_tool(delegate("architect"), 0) is None
    detector.begin_turn(ctx(agent="architect", depth=1))
    assert detector.before_tool(delegate("debugger"), 0) is None
    detector.begin_turn(ctx(agent="debugger", depth=2))
    firing = detector.before_tool(delegate("architect"), 3)
    assert summary([firing]) == [("subagents", "block", 3)]
    assert firing.headline == "subagents: circular hand-off main → architect → debugger → architect"
    assert "refused" in firing.message


def test_a_named_agent_handing_back_to_itself_by_type_is_blocked() -> None:
    detector = started(SubagentDetector(SubagentsConfig()))
    detector.begin_turn(ctx(agent="code-reviewer", depth=1))
    again = ToolCall(
        id="t", name="task", arguments={"subagent_type": "Code-Reviewer", "prompt": "review it"}
    )
    firing = detector.before_tool(again, 2)
    assert firing is not None and "main → code-reviewer → code-reviewer" in firing.headline


def test_delegating_to_the_same_subagent_again_after_it_returned_is_fine():
    detector = started(SubagentDetector(SubagentsConfig()))
    assert detector.before_tool(delegate("reviewer"), 0) is None
    detector.begin_turn(ctx(agent="reviewer", depth=1))
    assert detector.end_turn("looks good", progress=True) is None
    assert detector.before_tool(delegate("reviewer"), 1) is None
    assert (
        detector.before_tool(ToolCall(id="b", name="bash", arguments={"command": "ls"}), 2) is None
    )


def test_agents_with_their_own_detectors_share_the_session_chain():
    chain = DelegationChain()
    main = build_detectors(DetectorsConfig(), chain)
    sub = build_detectors(DetectorsConfig(), chain)
    for detector in main:
        detector.begin_turn(ctx())
    for detector in sub:
        detector.begin_turn(ctx(agent="helper", depth=1))
    blocked = [d.before_tool(delegate("main"), 0) for d in sub]
    assert summary([f for f in blocked if f]) == [("subagents", "block", 0)]


def test_delegation_beyond_the_maximum_depth_is_blocked():
    detector = started(SubagentDetector(SubagentsConfig(max_depth=2)))
    detector.begin_turn(ctx(agent="planner", depth=1))
    assert detector.before_tool(delegate("coder"), 0) is None
    detector.begin_turn(ctx(agent="coder", depth=2))
    firing = detector.before_tool(delegate("tester"), 4)
    assert summary([firing]) == [("subagents", "block", 4)]
    assert "3 deep" in firing.message


def test_subagent_checks_can_be_turned_off():
    detector = started(SubagentDetector(SubagentsConfig(max_depth=0, block_circular=False)))
    for depth, name in enumerate(["a", "b", "a", "b", "a", "b"], start=1):
        assert detector.before_tool(delegate(name), depth) is None
        detector.begin_turn(ctx(agent=name, depth=depth))


# ---------------------------------------------------------------- stream-text


def stream(detector: Detector, text: str, chunk: int = 7) -> list[Firing]:
    pieces = (text[i : i + chunk] for i in range(0, len(text), chunk))
    return [f for f in map(detector.on_text, pieces) if f]


LOOP_UNIT = "I will now fix the failing import in the parser module and re-run. "


def test_a_streamed_text_loop_stops_the_stream():
    detector = started(StreamTextDetector(StreamTextConfig()))
    firings = stream(detector, "Let me look.\n" + LOOP_UNIT * 8)
    assert summary(firings) == [("stream-text", "stop", None)]
    assert firings[0].headline.startswith("stream-text: text repeated 5× (strike 1/3)")
    assert "stream was stopped" in firings[0].message


def test_a_markdown_list_with_a_long_shared_prefix_is_not_a_loop():
    detector = started(StreamTextDetector(StreamTextConfig()))
    items = "".join(
        f"- **Update the loop-guard configuration loader in caretz/guard** for case {n}\n"
        for n in range(40)
    )
    table = "".join(
        f"| caretz/guard/detectors.py | identical-call | row {n} |\n" for n in range(30)
    )
    rule = "\n" + "=" * 400 + "\n"
    assert stream(detector, items + table + rule) == []


def test_identical_lines_in_a_code_block_or_table_need_many_more_repeats():
    detector = started(StreamTextDetector(StreamTextConfig()))
    row = "    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],\n"
    blank = "|            |            |            |            |            |\n"
    text = "Here:\n```python\nM = [\n" + row * 12 + "]\n```\n" + blank * 12
    assert stream(detector, text) == []
    assert summary(stream(detector, "```\n" + row * 21)) == [("stream-text", "stop", None)]


def test_stream_text_strikes_and_their_reset():
    detector = started(StreamTextDetector(StreamTextConfig(max_strikes=2, reset_after=3)))
    first = stream(detector, LOOP_UNIT * 5)
    second = stream(detector, LOOP_UNIT * 5)
    assert [f.headline.split(":")[1] for f in first + second] == [
        " text repeated 5× (strike 1/2)",
        " text repeated 5× (strike 2/2)",
    ]
    assert "say in one sentence" in second[0].message
    assert "say in one sentence" not in first[0].message
    detector.after_response(
        Message(role="assistant", content=LOOP_UNIT)
    )  # the aborted one: not clean
    detector.after_response(Message(role="assistant", content="clean answer"))
    detector.after_tool(
        ToolObservation(index=0, tool="read", args={"path": "a.py"}, output="x", failed=False)
    )
    assert detector.strikes == 2
    detector.after_response(Message(role="assistant", content="clean answer"))
    assert detector.strikes == 0


def test_stream_text_repeats_zero_turns_it_off():
    detector = started(StreamTextDetector(StreamTextConfig(max_repeats=0)))
    assert stream(detector, LOOP_UNIT * 30) == []


def test_repeated_tail_finds_a_unit_of_min_period_and_never_a_divider():
    unit = "abcdefghij" * 5 + "!"
    assert repeated_tail("intro " + unit * 5, 50, 5) == unit
    assert repeated_tail("intro " + unit * 4, 50, 5) is None
    # A sentence shorter than minPeriod loops as a block of whole sentences: the same
    # length of repeated text as a long one (3 × 18 characters, 5 times).
    short = "It is a cat. Yes. "
    assert repeated_tail("So: " + short * 15, 50, 5) == short * 3
    assert repeated_tail("So: " + short * 14, 50, 5) is None
    assert repeated_tail("x" * 2000, 50, 5) == "x" * 50
    # Rules, a table's separators and blank lines hold no letter or digit: never a loop.
    for divider in ("=" * 2000, "|---" * 500, "\n" * 2000, "- - " * 500):
        assert repeated_tail(divider, 50, 5) is None


# ---------------------------------------------------------------- reasoning


def think(detector: Detector, lines: Iterable[str], now: float = 0.0) -> list[Firing]:
    return [f for f in (detector.on_thinking(line + "\n", now) for line in lines) if f]


def test_a_repeated_reasoning_line_stops_the_stream():
    detector = started(ReasoningDetector(ReasoningConfig()))
    loop = ["Let me check the test file again to be sure.", "Hmm."] * 5
    firings = think(detector, loop)
    assert summary(firings) == [("reasoning", "stop", None)]
    assert firings[0].fingerprint == "let me check the test file again to be sure."


def test_varied_reasoning_and_short_lines_are_not_a_loop():
    detector = started(ReasoningDetector(ReasoningConfig()))
    varied = [
        f"Step {n}: the failure in module_{n} comes from a different import" for n in range(60)
    ]
    short_lines = ["Wait.", "Hmm, no.", "OK."] * 20
    assert think(detector, varied + short_lines) == []


def test_reasoning_rotating_over_a_few_lines_is_low_diversity():
    detector = started(ReasoningDetector(ReasoningConfig()))
    thoughts = [f"Maybe the bug is in the {part} of the request handler" for part in "abcdefgh"]
    firings = think(detector, thoughts * 4)
    assert summary(firings) == [("reasoning", "stop", None)]
    assert "circles over 8 lines" in firings[0].headline


def test_a_reasoning_only_stall_warns_then_stops():
    detector = started(ReasoningDetector(ReasoningConfig()))
    readings = [0.0, 100.0, 180.0, 300.0, 599.0, 600.0]
    firings = [f for f in (detector.on_thinking("…", now) for now in readings) if f]
    assert [(f.severity, f.headline) for f in firings] == [
        ("warn", "reasoning: 180s of reasoning without an answer or a tool call"),
        ("stop", "reasoning: 600s of reasoning without an answer or a tool call"),
    ]


def test_answer_text_or_a_tool_call_ends_the_stall():
    detector = started(ReasoningDetector(ReasoningConfig()))
    assert detector.on_thinking("planning", 0.0) is None
    detector.on_text("Here is the plan.")
    assert detector.on_thinking("more", 170.0) is None
    assert detector.on_thinking("more", 340.0) is None  # 170 s since the text
    detector.before_tool(ToolCall(id="r", name="read", arguments={"path": "a.py"}), 0)
    assert detector.on_thinking("more", 500.0) is None


def test_reasoning_checks_can_be_turned_off():
    config = ReasoningConfig(max_line_repeats=0, diversity_window=0, stall_detection=False)
    detector = started(ReasoningDetector(config))
    assert think(detector, ["Let me check the test file again to be sure."] * 40, 900.0) == []


# ---------------------------------------------------------------- same-answer


def turn(detector: Detector, answer: str, progress: bool = False, from_user: bool = False):
    detector.begin_turn(ctx(from_user=from_user))
    return detector.end_turn(answer, progress)


def test_the_same_answer_across_automated_turns_stops():
    detector = SameAnswerDetector(SameAnswerConfig())
    assert turn(detector, "I could not find the config file.", from_user=True) is None
    assert turn(detector, "I could not find the config file.") is None
    firing = turn(detector, "I could not  find the config file.")
    assert summary([firing]) == [("same-answer", "stop", None)]
    assert firing.headline.startswith("same-answer: same answer 3 turns in a row")


def test_a_turn_with_progress_never_counts_as_a_repeat():
    detector = SameAnswerDetector(SameAnswerConfig())
    answers = ["Done: all tests pass."] * 6
    assert [turn(detector, a, progress=True) for a in answers] == [None] * 6


def test_a_genuine_user_turn_resets_the_same_answer_count():
    detector = SameAnswerDetector(SameAnswerConfig())
    assert turn(detector, "Blocked on credentials.") is None
    assert turn(detector, "Blocked on credentials.") is None
    assert turn(detector, "Blocked on credentials.", from_user=True) is None
    assert turn(detector, "Blocked on credentials.") is None


def test_empty_answers_repeat_only_without_progress():
    detector = SameAnswerDetector(SameAnswerConfig())
    assert [turn(detector, "", progress=True) for _ in range(4)] == [None] * 4
    firings = [turn(detector, "") for _ in range(2)]
    assert firings[0] is None
    assert "(empty response)" in firings[1].headline


def test_same_answer_max_repeats_zero_turns_it_off():
    detector = SameAnswerDetector(SameAnswerConfig(max_repeats=0))
    assert [turn(detector, "same") for _ in range(6)] == [None] * 6


# ---------------------------------------------------------------- tool-budget


def test_the_tool_budget_warns_with_what_remains_then_stops():
    detector = started(ToolBudgetDetector(ToolBudgetConfig(warn_at=5, stop_at=8)))
    calls = [call("read", {"path": f"f{n}.py"}, "x") for n in range(9)]
    firings = feed(detector, calls)
    assert summary(firings) == [
        ("tool-budget", "warn", 4),
        ("tool-budget", "stop", 7),
        ("tool-budget", "stop", 8),
    ]
    assert "3 remain" in firings[0].message
    detector.begin_turn(ctx())
    assert feed(detector, calls[:4]) == []


def test_the_tool_budget_levels_can_be_turned_off():
    detector = started(ToolBudgetDetector(ToolBudgetConfig(warn_at=0, stop_at=0)))
    assert feed(detector, [call("read", {"path": f"{n}"}, "x") for n in range(500)]) == []


# ---------------------------------------------------------------- productive work, all detectors


def all_defaults() -> list[Detector]:
    detectors = build_detectors(DetectorsConfig())
    for detector in detectors:
        detector.begin_turn(ctx())
    return detectors


def feed_all(detectors: list[Detector], calls: list[tuple]) -> list[Firing]:
    return [firing for detector in detectors for firing in feed(detector, calls)]


def test_a_150_call_turn_fixing_different_errors_fires_nothing():
    calls = []
    for n in range(50):
        calls.append(call("read", {"path": f"src/module_{n % 7}.py"}, f"source v{n}"))
        calls.append(call("edit", {"path": f"src/module_{n % 7}.py", "new": f"fix {n}"}, "ok"))
        calls.append(
            call("bash", PYTEST, f"E   ImportError: cannot import name_{n}\n1 failed", True)
        )
    assert feed_all(all_defaults(), calls) == []


def test_polling_whose_output_changes_fires_nothing():
    poll = {"command": "kubectl get pods -o wide"}
    calls = []
    for n in range(40):
        calls.append(call("bash", {"command": "sleep 10"}, ""))
        calls.append(call("bash", poll, f"web-1  0/1  ContainerCreating  {n}"))
    assert feed_all(all_defaults(), calls) == []


# ---------------------------------------------------------------- config


DETECTOR_KEYS = {
    "identicalCall": IdenticalCallDetector,
    "repeatedError": RepeatedErrorDetector,
    "alternation": AlternationDetector,
    "toolRounds": ToolRoundsDetector,
    "subagents": SubagentDetector,
    "streamText": StreamTextDetector,
    "reasoning": ReasoningDetector,
    "sameAnswer": SameAnswerDetector,
    "toolBudget": ToolBudgetDetector,
    "rounds": RoundsDetector,
    "noProgress": NoProgressDetector,
}


def test_every_detector_is_on_by_default():
    kinds = {type(detector) for detector in build_detectors(DetectorsConfig())}
    assert kinds == set(DETECTOR_KEYS.values())


@pytest.mark.parametrize("key", sorted(DETECTOR_KEYS))
def test_each_detector_can_be_disabled_from_the_profile(key):
    config = LoopGuardConfig.model_validate({"detectors": {key: {"enabled": False}}})
    kinds = {type(detector) for detector in build_detectors(config.detectors)}
    assert DETECTOR_KEYS[key] not in kinds
    assert len(kinds) == len(DETECTOR_KEYS) - 1


def test_profile_keys_are_camel_case_and_reach_the_detectors():
    config = LoopGuardConfig.model_validate(
        {"detectors": {"identicalCall": {"warnStreak": 2, "sameResultOnly": False}}}
    )
    detector = next(
        d for d in build_detectors(config.detectors) if isinstance(d, IdenticalCallDetector)
    )
    detector.begin_turn(ctx())
    polls = [call("bash", {"command": "date"}, f"t{n}") for n in range(2)]
    assert summary(feed(detector, polls)) == [("identical-call", "judge", 1)]


@pytest.mark.parametrize(
    ("data", "named"),
    [
        (
            {"identicalCall": {"warnStreak": 6, "interruptStreak": 4}},
            "identicalCall.interruptStreak",
        ),
        ({"repeatedError": {"consecutive": 1}}, "repeatedError.consecutive"),
        ({"alternation": {"repeats": 1}}, "alternation.repeats"),
        ({"streamText": {"minPeriod": 4}}, "minPeriod"),
        ({"reasoning": {"stallWarnSeconds": 60, "stallStopSeconds": 30}}, "stallStopSeconds"),
        ({"toolBudget": {"warnAt": 50, "stopAt": 10}}, "toolBudget.stopAt"),
        ({"identicalCall": {"warnStrike": 3}}, "warnStrike"),
    ],
)
def test_bad_detector_settings_name_the_key(data, named):
    with pytest.raises(ValidationError) as error:
        DetectorsConfig.model_validate(data)
    assert named in str(error.value)


def test_auto_resume_and_disallowed_tools_are_settings():
    config = DetectorsConfig.model_validate(
        {
            "autoResume": {"enabled": True, "maxResumes": 2},
            "disallowedTools": {"bash": ["rm -rf"], "write": ["*.env"]},
        }
    )
    assert config.auto_resume.enabled and config.auto_resume.max_resumes == 2
    assert config.auto_resume.message == "loop detected and you were stopped - resume now"
    assert config.disallowed_tools == {"bash": ["rm -rf"], "write": ["*.env"]}


def test_the_same_fenced_block_again_and_again_is_a_loop_read_across_the_fences():
    block = "Here is the fix:\n```python\nimport os\nprint(os.getcwd())\n```\n"
    detector = started(StreamTextDetector(StreamTextConfig()))
    assert stream(detector, "Two examples.\n" + block * 19) == []
    detector = started(StreamTextDetector(StreamTextConfig()))
    firings = stream(detector, "Two examples.\n" + block * 40)
    assert summary(firings) == [("stream-text", "stop", None)]
    assert "text repeated 20×" in firings[0].headline
