"""The interactive view: streamed Markdown, tool lines, diffs and [loop-guard] lines."""

from __future__ import annotations

import io
import itertools

from rich.console import Console

from caretz.session.records.parse import parse_record
from caretz.ui.live import LiveView
from caretz.ui.markdown import WrappingMarkdown

ANSWER = """\
I looked at the failing test and found the cause.

The fixture `make_db` opens a connection **per test** and never closes it, so after
a few hundred tests the pool runs dry and `test_orders` times out.

What I changed:

- `tests/conftest.py`: the fixture now closes its connection.
- `orders/db.py`: the pool size comes from the settings instead of a constant.

All 412 tests pass now. One thing is left open: the CI job still sets the old
variable name, which you may want to rename too.
"""


def plain_console() -> Console:
    return Console(file=io.StringIO(), width=72, color_system=None, highlight=False)


def ticking_clock():
    ticks = itertools.count()
    return lambda: float(next(ticks))  # each reading a second later: every delta re-renders


def screen(console: Console) -> str:
    return console.file.getvalue()


def markdown_as_printed(text: str) -> str:
    console = plain_console()
    console.print(WrappingMarkdown(text))
    return "\n".join(line.rstrip() for line in screen(console).splitlines())


def response_event(content: str) -> dict:
    return {
        "type": "Model.Response",
        "message": {"role": "assistant", "content": content},
        "usage": {},
    }


def test_streamed_markdown_is_printed_once_and_whole():
    console = plain_console()
    view = LiveView(console, clock=ticking_clock())
    view.begin_turn()
    view.on_response_start()

    for start in range(0, len(ANSWER), 5):
        view.on_text(ANSWER[start : start + 5])
    view.on_event(parse_record(response_event(ANSWER)))
    view.end_turn()

    printed = "\n".join(line.rstrip() for line in screen(console).splitlines())
    assert printed.strip("\n") == markdown_as_printed(ANSWER).strip("\n")
    assert "**" not in printed and "per test" in printed


def test_a_growing_table_and_code_block_are_redrawn_until_whole():
    rows = "\n".join(f"| test_{n} | {'passed ' * (n % 4 + 1)}|" for n in range(12))
    answer = (
        "Results:\n\n| test | outcome |\n|---|---|\n"
        + rows
        + "\n| test_last_one_with_a_long_name | failed, see the log below |\n\n"
        + "```python\nfor n in range(3):\n    print(n)\n```\n\nThat is all."
    )
    console = plain_console()
    view = LiveView(console, clock=ticking_clock())
    view.begin_turn()

    for start in range(0, len(answer), 3):
        view.on_text(answer[start : start + 3])
    view.on_event(parse_record(response_event(answer)))
    view.end_turn()

    printed = "\n".join(line.rstrip() for line in screen(console).splitlines())
    assert printed.strip("\n") == markdown_as_printed(answer).strip("\n")


def test_complete_blocks_end_at_a_blank_line_outside_code():
    from caretz.ui.markdown import complete_blocks

    assert complete_blocks("one\n\ntwo") == "one\n\n"
    assert complete_blocks("one\n\n```\ncode\n\nmore") == "one\n\n"
    assert complete_blocks("```\ncode\n```\n\nafter") == "```\ncode\n```\n\n"
    assert complete_blocks("no break yet") == ""


def test_an_answer_that_was_not_streamed_is_still_shown():
    console = plain_console()
    view = LiveView(console)
    view.begin_turn()

    view.on_event(parse_record(response_event("Sent whole, not in deltas.")))
    view.end_turn()

    assert "Sent whole, not in deltas." in screen(console)


def test_tool_calls_are_one_line_each_with_status_and_duration():
    console = plain_console()
    view = LiveView(console)
    view.begin_turn()
    call = {"id": "call_1", "name": "bash", "arguments": {"command": "pytest -q"}}
    view.on_event(parse_record({"type": "Tool.Called", "call": call}))
    view.on_event(
        parse_record(
            {
                "type": "Tool.Result",
                "call_id": "call_1",
                "name": "bash",
                "ok": False,
                "exit_code": 1,
                "duration_s": 2.34,
                "output": "collected 3 items\nFAILED test_x.py::test_one\n1 failed, 2 passed",
            }
        )
    )
    edit = {"id": "call_2", "name": "edit", "arguments": {"path": "app.py"}}
    view.on_event(parse_record({"type": "Tool.Called", "call": edit}))
    view.on_event(
        parse_record(
            {
                "type": "Tool.Result",
                "call_id": "call_2",
                "name": "edit",
                "ok": True,
                "exit_code": None,
                "duration_s": 0.01,
                "output": "edited",
                "diff": "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n",
            }
        )
    )
    view.end_turn()

    lines = screen(console).splitlines()
    assert "✗ bash pytest -q (2.3s, exit 1)" in lines
    assert "  │ 1 failed, 2 passed" in lines
    assert "✓ edit app.py (0.0s)" in lines
    assert "-x = 1" in lines and "+x = 2" in lines


def test_a_command_cut_off_by_ctrl_c_says_so():
    console = plain_console()
    view = LiveView(console)
    view.begin_turn()
    call = {"id": "call_1", "name": "bash", "arguments": {"command": "sleep 300"}}
    view.on_event(parse_record({"type": "Tool.Called", "call": call}))

    view.end_turn("interrupted")

    assert "✗ bash sleep 300 (cancelled, process group killed)" in screen(console)


def test_loop_guard_events_print_their_lines():
    console = plain_console()
    view = LiveView(console)
    view.on_event(
        parse_record(
            {
                "type": "LoopGuard.Judged",
                "verdict": {
                    "stuck": True,
                    "confidence": 0.9,
                    "reason": "the same import error three times",
                    "try_instead": "install the package first",
                },
                "mode": "active",
                "action": "redirect",
                "applied": True,
            }
        )
    )
    view.on_event(
        parse_record(
            {
                "type": "LoopGuard.Stopped",
                "judged": True,
                "notice": "[loop-guard] ended the turn: the agent kept failing the same way.",
            }
        )
    )

    text = screen(console)
    assert "[loop-guard] stuck (0.90) → redirecting" in text
    assert "reason: the same import error three times" in text
    assert "[loop-guard] ended the turn: the agent kept failing the same way." in text


def test_subagent_events_stay_out_of_the_main_view():
    console = plain_console()
    view = LiveView(console)
    view.on_event(
        parse_record({**response_event("a subagent's private answer"), "agent": "task-1"})
    )
    assert screen(console) == ""


def test_compaction_shows_one_line():
    console = plain_console()
    view = LiveView(console)
    view.on_event(
        parse_record(
            {
                "type": "Session.Compacted",
                "trimmed": 3,
                "summarized": 12,
                "tokens_before": 170_000,
                "tokens_after": 41_000,
            }
        )
    )
    assert screen(console).strip() == (
        "⟳ compacted the conversation: summarized 12 older message(s), "
        "trimmed 3 old tool output(s) (~170.0k → ~41.0k tokens)"
    )


def test_a_reply_cut_off_at_the_output_limit_shows_what_became_of_it():
    console = plain_console()
    view = LiveView(console)
    event = {"type": "Model.OutputLimit", "max_tokens": 32_000, "continuation": 1}
    view.on_event(parse_record({**event, "action": "calls_not_run", "tool_calls": ["write"]}))
    view.on_event(parse_record({**event, "action": "continued", "tool_calls": []}))
    assert screen(console).strip().splitlines() == [
        "the reply hit the 32,000-token output limit: its calls (write) were not run; the "
        "model was told to write less at once",
        "the reply hit the 32,000-token output limit: asking the model to continue "
        "(continuation 1)",
    ]


def test_a_reply_that_broke_off_is_taken_off_the_screen_before_the_retry():
    import pyte

    from caretz.messages import Message
    from caretz.providers.base import Retrying

    out = io.StringIO()
    console = Console(file=out, width=72, height=24, force_terminal=True, highlight=False)
    view = LiveView(console, clock=ticking_clock())
    view.begin_turn()
    view.on_response_start()
    for piece in ("First paragraph, complete.\n\n", "A second one that brea"):
        view.on_text(piece)
    assert view.stream is not None and view.stream.printed  # printed for good already

    view.on_retry(
        Retrying(1, 1.0, "the reply broke off", Message(role="assistant", content="First"))
    )
    view.on_text("The whole answer.")
    view.on_event(parse_record(response_event("The whole answer.")))
    view.end_turn()

    emulated = pyte.Screen(72, 24)
    pyte.Stream(emulated).feed(out.getvalue().replace("\n", "\r\n"))
    shown = "\n".join(line.rstrip() for line in emulated.display)
    assert "First paragraph" not in shown and "second one" not in shown
    assert "The whole answer." in shown
    assert "retrying in 1s (the reply broke off): the reply starts over" in shown


def test_a_wide_table_cell_wraps_instead_of_being_cut():
    long_path = "caretz/providers/" + "x" * 90 + "_end.py"
    answer = f"| file | what |\n|---|---|\n| {long_path} | the provider, the long way round |\n\n"
    console = plain_console()
    view = LiveView(console, clock=ticking_clock())
    view.begin_turn()
    view.on_response_start()

    view.on_text(answer)
    view.on_event(parse_record(response_event(answer)))
    view.end_turn()

    printed = screen(console)
    assert "…" not in printed
    assert printed.count("x") == 90 and "_end.py" in "".join(printed.split())
    assert "the provider, the long way round" in " ".join(printed.split())
