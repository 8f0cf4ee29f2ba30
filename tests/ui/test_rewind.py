"""/rewind and /undo on a real session (real git, the loopback model server): the
answers a person may give, and what each leaves changed."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from rich.console import Console

from caretz.app.session import start_session
from caretz.config.settings import resolve_settings
from caretz.ui.live import LiveView
from caretz.ui.repl import Repl
from caretz.ui.rewind import RewindChooser
from tests.checkpoints.helpers import require_git
from tests.modelserver import ModelServer, text, tool


@pytest.fixture(autouse=True)
def git_binary() -> str:
    return require_git()


@pytest.fixture
def env(server: ModelServer) -> dict[str, str]:
    return {
        "ANTHROPIC_API_KEY": "sk-test",
        "ANTHROPIC_BASE_URL": server.url,
        "CARETZ_DATA_DIR": os.environ["CARETZ_DATA_DIR"],
        "CARETZ_CONFIG": os.environ["CARETZ_CONFIG"],
        "CARETZ_MODEL": "anthropic/claude-main",
    }


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "app.py").write_text("v1\n")
    return folder


def open_repl(env: dict[str, str], project: Path) -> Repl:
    console = Console(file=io.StringIO(), width=120, color_system=None)
    view = LiveView(console)
    session = start_session(resolve_settings({}, env), view, env, workspace=project)
    return Repl(session, view, console, env)


@pytest.fixture
def repl(env, project):
    running = open_repl(env, project)
    yield running
    running.session.close()


def said(repl: Repl, action) -> str:
    before = len(repl.console.file.getvalue())
    action()
    return repl.console.file.getvalue()[before:]


def chooser(repl: Repl, *answers: str | None) -> RewindChooser:
    queue = list(answers)
    return RewindChooser(repl, ask=lambda question: queue.pop(0))


def edit_turn(repl: Repl, server: ModelServer) -> None:
    server.add(
        tool("read", path="app.py"), tool("write", path="app.py", content="v2\n"), text("Updated.")
    )
    repl.run_turn("update the app")


def test_nothing_to_rewind_or_undo_yet(repl):
    assert "no checkpoints yet" in said(repl, lambda: chooser(repl).rewind(""))
    assert "nothing to undo" in said(repl, lambda: chooser(repl).undo())


def test_answers_that_change_nothing(repl, server, project):
    edit_turn(repl, server)

    cancelled = said(repl, lambda: chooser(repl, "").rewind(""))
    wrong_number = said(repl, lambda: chooser(repl, "7").rewind(""))
    wrong_scope = said(repl, lambda: chooser(repl, "1", "sideways").rewind(""))
    dismissed = said(repl, lambda: chooser(repl, "1", None).rewind(""))

    assert "update the app" in cancelled and "nothing was changed" in cancelled
    assert "no checkpoint '7': give a number from the list" in wrong_number
    assert "'sideways': answer files, conversation or both" in wrong_scope
    assert "nothing was changed" in dismissed
    assert (project / "app.py").read_text() == "v2\n"
    assert (
        len(repl.session.agent.conversation.messages) == 6
    )  # prompt, read, its result, write, its result, answer


def test_a_conflict_is_listed_and_no_keeps_the_users_file(repl, server, project):
    edit_turn(repl, server)
    (project / "app.py").write_text("my own edit\n")

    refused = said(repl, lambda: chooser(repl, "n").rewind("1 files"))

    assert "1 file(s) changed outside caretz since the checkpoint:" in refused
    assert "app.py: changed outside caretz since the checkpoint" in refused
    assert (project / "app.py").read_text() == "my own edit\n"


def test_a_conversation_rewind_offers_the_prompt_again_and_keeps_the_files(repl, server, project):
    edit_turn(repl, server)

    done = said(repl, lambda: chooser(repl).rewind("1 conversation"))

    assert "the conversation is back to before turn 1" in done
    assert repl.session.agent.conversation.messages == []
    assert repl.draft == "update the app"
    assert (project / "app.py").read_text() == "v2\n"


def test_undo_asks_before_overwriting_then_undoing_it_brings_the_turn_back(repl, server, project):
    """The one /undo: the newest turn that changed files, files and conversation, through
    the session's rewind; right after, the rewind itself."""
    edit_turn(repl, server)
    (project / "app.py").write_text("v3, my own edit\n")

    undone = said(repl, lambda: chooser(repl, "y").undo())

    assert "app.py: changed outside caretz since the checkpoint" in undone
    assert (project / "app.py").read_text() == "v1\n"
    assert repl.session.agent.conversation.messages == []
    assert repl.draft == "update the app"

    redone = said(repl, lambda: chooser(repl).undo())  # nothing changed since: no question

    assert "changed outside caretz" not in redone
    assert (project / "app.py").read_text() == "v3, my own edit\n"
    assert len(repl.session.agent.conversation.messages) == 6


def test_checkpoints_switched_off_in_the_profile(env, project):
    Path(env["CARETZ_CONFIG"]).write_text(
        json.dumps({"profiles": {"general": {"checkpoints": {"enabled": False}}}})
    )
    repl = open_repl(env, project)
    try:
        shown = said(repl, lambda: chooser(repl).rewind(""))
    finally:
        repl.session.close()
    assert "checkpoints are off in this profile (checkpoints.enabled)" in shown
