"""`@path` in the interactive session: the real `caretz` in a pseudo-terminal completes a
mention with Tab from the project's files, attaches what it names when the message is
sent, and refuses a hidden path in one line without reading it."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.sandbox_folders import require
from tests.e2e.terminal import PROMPT
from tests.modelserver import ModelServer, text


def test_tab_completes_a_mention_and_sending_attaches_the_file(
    screen, server: ModelServer, workspace: Path
):
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("print('hello from app')\n")
    (workspace / "src" / "util.py").write_text("x = 1\n")
    server.add(text("It prints a greeting."))
    term = screen()

    term.expect_prompt()
    term.child.send("what does @sr")
    term.wait_for_screen("src/util.py")  # offered as it is typed
    term.child.send("\t")  # the first: the folder
    term.wait_for_screen(f"{PROMPT} what does @src/")
    term.child.send("ap")
    term.wait_for_screen("src/app.py", absent="src/util.py")
    term.child.send("\t")
    term.wait_for_screen(f"{PROMPT} what does @src/app.py")
    term.child.send(" do?\r")
    term.expect("attached src/app.py")
    term.expect("It prints a greeting.")
    term.ctrl_d()

    sent = server.requests[0].messages[-1]["content"]
    assert sent == (
        "what does @src/app.py do?\n\n<file path=\"src/app.py\">\nprint('hello from app')\n</file>"
    )


def test_a_mentioned_folder_is_listed_and_a_hidden_file_is_refused_unread(
    terminal, server: ModelServer, workspace: Path, tmp_path: Path
):
    require("bwrap")
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("PRIVATE KEY 0123")
    (workspace / "docs" / "guide").mkdir(parents=True)
    (workspace / "docs" / "intro.md").write_text("# intro\n")
    (workspace / "docs" / "guide" / "setup.md").write_text("# setup\n")
    server.add(text("Two entries."))
    term = terminal(env={"HOME": str(home)})

    term.type("look at @docs and @~/.ssh/id_rsa")
    term.expect("@~/.ssh/id_rsa was not attached: cannot read")
    term.expect("attached docs/ \\(2 entries\\)")
    term.expect("Two entries.")
    term.ctrl_d()

    sent = server.requests[0].messages[-1]["content"]
    assert sent.startswith("look at @docs and @~/.ssh/id_rsa\n\n")
    assert sent.endswith('<folder path="docs/">\nguide/\nintro.md\n</folder>')
    assert "PRIVATE KEY" not in sent
