"""The file tools end to end: the real CLI, the loopback model server sending the calls a
model sends, and what the model is told back. Edits it can recover from, the read
before an edit or a write, files changed on disk since, multi_edit, bad paths (a NUL
byte, a FIFO, a directory) that fail one call and let the run go on, and a 2,000-line read.
"""

from __future__ import annotations

import json
import os
import shutil
from typing import Any

import pytest

from tests.e2e.conftest import Caretz, Run
from tests.modelserver import ModelServer, calls, text, tool


@pytest.fixture(autouse=True)
def bwrap_installed() -> None:
    assert shutil.which("bwrap"), "bubblewrap is missing: apt install bubblewrap"


def results(caretz: Caretz, run: Run) -> list[dict[str, Any]]:
    return [e for e in caretz.events(run.session_id) if e["type"] == "Tool.Result"]


def told(server: ModelServer) -> list[str]:
    """Every tool result the model was sent, in order (Anthropic's wire form)."""
    seen: list[str] = []
    last = server.requests[-1].messages
    for message in last:
        if isinstance(message["content"], list):
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    content = block["content"]
                    if isinstance(content, list):
                        content = "".join(part.get("text", "") for part in content)
                    seen.append(content)
    return seen


def run_calls(caretz: Caretz, server: ModelServer, *replies: Any) -> Run:
    server.add(*replies, text("done"))
    run = caretz("-p", "work on the files", "--loop-guard", "off")
    assert run.code == 0, run.stderr
    return run


def test_an_edit_that_is_not_found_shows_the_closest_lines_and_what_differs(
    caretz, server, workspace
):
    (workspace / "app.py").write_text("def main():\n\tprint('hello')\n\treturn 0\n")
    run = run_calls(
        caretz,
        server,
        tool("read", path="app.py"),
        tool(
            "edit", path="app.py", old_string="    print('hello')\n    return 0", new_string="pass"
        ),
    )

    message = told(server)[-1]
    assert message.startswith("old_string not found in app.py. The closest text is lines 2–3")
    assert "     2\t\tprint('hello')" in message and "What differs: whitespace only" in message
    assert results(caretz, run)[-1]["ok"] is False
    assert (workspace / "app.py").read_text().startswith("def main():\n\tprint")


def test_several_matches_name_their_lines(caretz, server, workspace):
    (workspace / "cfg.py").write_text("x = 1\ny = 2\nx = 1\n")
    run_calls(
        caretz,
        server,
        tool("read", path="cfg.py"),
        tool("edit", path="cfg.py", old_string="x = 1", new_string="x = 3"),
    )

    assert told(server)[-1] == (
        "old_string matches 2 places in cfg.py (starting on lines 1, 3); add more surrounding "
        "context to make it unique, or set replace_all to change every one"
    )


def test_curly_quotes_and_trailing_spaces_match_when_that_makes_one_match(
    caretz, server, workspace
):
    (workspace / "msg.py").write_text('greeting = "hello"   \nfarewell = "bye"\n')
    run_calls(
        caretz,
        server,
        tool("read", path="msg.py"),
        tool("edit", path="msg.py", old_string="greeting = “hello”", new_string="greeting = “hi”"),
    )

    message = told(server)[-1]
    assert message.startswith("Edited msg.py: 1 replacement\nNote: old_string matched only with")
    assert "curly quotes read as straight ones" in message and "line 1" in message
    assert (workspace / "msg.py").read_text() == 'greeting = "hi"\nfarewell = "bye"\n'


def test_an_existing_file_is_read_before_it_is_edited_or_written(caretz, server, workspace):
    (workspace / "notes.txt").write_text("alpha\n")
    run_calls(
        caretz,
        server,
        tool("edit", path="notes.txt", old_string="alpha", new_string="beta"),
        tool("write", path="notes.txt", content="gamma\n"),
        tool("write", path="new.txt", content="a new file needs no read\n"),
        tool("read", path="notes.txt"),
        tool("edit", path="notes.txt", old_string="alpha", new_string="beta"),
    )

    messages = told(server)
    for refused, verb in ((messages[0], "edit"), (messages[1], "write")):
        assert refused == (
            "Not changed: notes.txt exists and has not been read yet; read it first "
            f"(the {verb} must start from what the file holds now)"
        )
    assert messages[2] == "Wrote 1 line to new.txt"
    assert messages[4] == "Edited notes.txt: 1 replacement"
    assert (workspace / "notes.txt").read_text() == "beta\n"


def test_a_file_changed_on_disk_since_it_was_read_is_not_edited(caretz, server, workspace):
    (workspace / "todo.md").write_text("- one\n- two\n")
    run_calls(
        caretz,
        server,
        tool("read", path="todo.md"),
        tool("bash", command="printf -- '- three\\n' >> todo.md"),
        tool("edit", path="todo.md", old_string="- one", new_string="- ONE"),
        tool("read", path="todo.md"),
        tool("edit", path="todo.md", old_string="- one", new_string="- ONE"),
    )

    messages = told(server)
    refusal = messages[2]
    assert refusal.startswith("Not changed: todo.md changed on disk since you last read it")
    assert "What changed:" in refusal and "+- three" in refusal
    assert messages[4] == "Edited todo.md: 1 replacement"
    assert (workspace / "todo.md").read_text() == "- ONE\n- two\n- three\n"


def test_multi_edit_applies_all_or_none(caretz, server, workspace):
    (workspace / "m.py").write_text("a = 1\nb = 2\nc = 3\n")
    first = [
        {"old_string": "a = 1", "new_string": "a = 10"},
        {"old_string": "missing", "new_string": "x"},
    ]
    second = [
        {"old_string": "a = 1", "new_string": "a = 10"},
        {"old_string": "a = 10\nb = 2", "new_string": "a = 10\nb = 20"},
    ]
    run_calls(
        caretz,
        server,
        tool("read", path="m.py"),
        tool("multi_edit", path="m.py", edits=first),
        tool("multi_edit", path="m.py", edits=second),
    )

    messages = told(server)
    assert messages[1].startswith("edit 2 of 2: old_string not found in m.py")
    assert messages[1].endswith("; no edit was made (all or none)")
    assert messages[2] == "Edited m.py: 2 replacements"
    assert (workspace / "m.py").read_text() == "a = 10\nb = 20\nc = 3\n"


def test_bad_paths_fail_one_call_and_the_run_goes_on(caretz, server, workspace):
    os.mkfifo(workspace / "pipe")
    (workspace / "folder").mkdir()
    (workspace / "ok.txt").write_text("still here\n")
    run = run_calls(
        caretz,
        server,
        calls(("read", {"path": "a\0b.txt"}), ("write", {"path": "x\0y", "content": "z"})),
        tool("read", path="pipe"),
        tool("write", path="pipe", content="never written to a FIFO"),
        tool("read", path="folder"),
        tool("read", path="ok.txt"),
    )

    messages = told(server)
    assert "contains a NUL byte" in messages[0] and "contains a NUL byte" in messages[1]
    assert messages[2] == (
        "pipe is a FIFO (named pipe), not a regular file; the file tools read and write only "
        "regular files"
    )
    assert messages[3].startswith("pipe is a FIFO")
    assert messages[4] == "folder is a directory, not a file; use glob to list its files"
    assert messages[5] == "     1\tstill here"
    events = caretz.events(run.session_id)
    assert events[-1]["type"] == "Session.Ended" or any(e["type"] == "Turn.Ended" for e in events)
    assert [e["status"] for e in events if e["type"] == "Turn.Ended"] == ["done"]


def test_read_shows_2000_lines_a_call_and_says_where_to_go_on(caretz, server, workspace):
    # 2,000 lines of about 30 characters: well within the cap of a large window's read.
    (workspace / "big.py").write_text(
        "".join(f"    result_{n} = f(result_{n - 1})\n" for n in range(2500))
    )
    run_calls(caretz, server, tool("read", path="big.py"), tool("read", path="big.py", offset=2001))

    first, second = told(server)
    lines = first.splitlines()
    assert len(lines) == 2001 and lines[1999].startswith("  2000\t    result_1999")
    assert lines[-1] == "[lines 1–2000 of 2500; offset=2001 for more]"
    assert second.splitlines()[0].startswith("  2001\t") and second.endswith(
        "[lines 2001–2500 of 2500; the end]"
    )


def test_long_lines_are_cut_with_a_marker(caretz, server, workspace):
    (workspace / "min.js").write_text("x" * 5000 + "\n")
    run_calls(caretz, server, tool("read", path="min.js"))

    assert told(server)[0] == "     1\t" + "x" * 2000 + " [... 3000 more characters on this line]"


def test_the_tool_results_reach_the_model_as_json_safe_text(caretz, server, workspace):
    """Nothing a file holds breaks the request: a Latin-1 file arrives as its text, bytes
    that are not text in UTF-8 (or any encoding) arrive replaced."""
    (workspace / "latin1.txt").write_bytes(b"caf\xe9\n")
    (workspace / "stray.txt").write_bytes("été\n".encode() + b"\xff\n")
    run_calls(caretz, server, tool("read", path="latin1.txt"), tool("read", path="stray.txt"))

    latin1, stray = told(server)
    assert latin1.splitlines()[0] == "     1\tcafé" and "CP1252 (detected)" in latin1
    assert stray.splitlines()[:2] == ["     1\tété", "     2\t\ufffd"]
    json.dumps(server.requests[-1].body)
