"""`caretz -p` as people see it: in a real pseudo-terminal (drawn with pyte) it shows a spinner
while a command runs and draws the answer as Markdown; piped or redirected it writes plain
lines and the raw answer, with nothing redrawn. The real CLI against the loopback server."""

from __future__ import annotations

import re

import pytest

from tests.modelserver import ModelServer, text, tool
from tests.sandbox.helpers import marker, sleepers, wait_for

SPINNER_FRAMES = re.compile("[\u2800-\u28ff]")  # the braille dots a spinner turns through
# Cursor movement, erasing, hiding or showing the cursor: what a redrawn line is made of.
CURSOR_CONTROL = re.compile(r"\x1b\[\??[0-9;]*[ABCDEFGHJKlh]|\r(?!\n)")
COLOUR = re.compile(r"\x1b\[[0-9;]*m")
WAIT_FOR_GO = "until [ -e go ]; do sleep 0.05; done; echo ready"
ANSWER = (
    "# Report\n\n"
    "The fix is **done**.\n\n"
    "```python\nprint('hi')\n```\n\n"
    "| file | change |\n|---|---|\n| app.py | fixed |\n\n"
    "That is all."
)


def test_a_running_command_shows_a_spinner_that_is_gone_once_it_ends(
    screen, server: ModelServer, workspace
):
    server.add(tool("bash", command=WAIT_FOR_GO), text("It is ready."))
    term = screen("-p", "wait for the file")

    # The command waits until the spinner was on screen: no timing involved.
    term.expect(r"bash until \[ -e go \][^\n]*\d+s · Ctrl-C to stop")
    (workspace / "go").touch()
    code = term.wait_for_exit()

    assert code == 0, term.text
    assert "✓ bash until [ -e go ]" in term.text
    assert "It is ready." in term.text
    assert "Ctrl-C to stop" not in term.text and not SPINNER_FRAMES.search(term.text)


@pytest.mark.parametrize("env", [{}, {"FORCE_COLOR": "1", "TTY_COMPATIBLE": "1"}])
def test_a_piped_run_draws_no_spinner_and_moves_no_cursor(caretz, server, env):
    server.add(tool("bash", command="echo hi"), text("Done."))

    run = caretz("-p", "say hi", env=env)  # stdout and stderr are pipes

    assert run.code == 0, run.stderr
    assert "✓ bash echo hi" in COLOUR.sub("", run.stderr)  # FORCE_COLOR still colours it
    assert "Ctrl-C to stop" not in run.stderr and not SPINNER_FRAMES.search(run.stderr)
    assert not CURSOR_CONTROL.search(run.stderr), repr(run.stderr)
    assert run.stdout == "Done.\n"


def test_json_output_in_a_terminal_draws_no_spinner(screen, server):
    server.add(tool("bash", command="echo hi"), text("Done."))
    term = screen("-p", "say hi", "--output", "json")

    code = term.wait_for_exit()

    assert code == 0, term.text
    assert '"type": "result"' in term.raw
    assert "Ctrl-C to stop" not in term.raw and not SPINNER_FRAMES.search(term.raw)


def test_in_a_terminal_the_answer_is_drawn_as_markdown(screen, server):
    server.add(text(ANSWER))
    term = screen("-p", "report")

    code = term.wait_for_exit()

    assert code == 0, term.text
    shown = term.text
    assert "The fix is done." in shown and "**" not in shown and "# Report" not in shown
    assert "```" not in shown and "print('hi')" in shown
    assert re.search(r"app\.py +fixed", shown) and "|" not in shown  # a table, drawn
    assert "\x1b[1mdone" in term.raw  # bold
    answer = shown[shown.index("Report") : shown.index("That is all.")]
    assert "\n\n\n" not in answer  # one blank line between blocks, never two


def test_redirected_or_piped_the_answer_is_the_raw_markdown(caretz, server, tmp_path):
    server.add(text(ANSWER))
    answer = tmp_path / "answer.md"

    run = caretz("-p", "report", stdout=answer)

    assert run.code == 0, run.stderr
    assert answer.read_text() == ANSWER + "\n"
    server.add(text(ANSWER))
    assert caretz("-p", "report").stdout == ANSWER + "\n"


def test_a_background_job_is_marked_with_its_id(caretz, server):
    mark = marker()
    server.add(tool("bash", command=f"sleep {mark}", background=True), text("Started."))

    run = caretz("-p", "start the server")

    assert run.code == 0, run.stderr
    line = f"⧗ background job j1: sleep {mark} (stopped when the run ends)"
    assert line in run.stderr.splitlines(), run.stderr
    assert "✓ bash sleep" not in run.stderr
    assert wait_for(lambda: not sleepers(mark), timeout=30)
