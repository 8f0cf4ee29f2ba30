"""Slash commands: parsing, completion, and what each does to a real session."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from rich.console import Console

from caretz.app.session import start_session
from caretz.config.settings import resolve_settings
from caretz.guard.guard import LoopGuard
from caretz.guard.seam import NullGuard
from caretz.session.events import read_events
from caretz.ui.live import LiveView
from caretz.ui.repl import Repl
from caretz.ui.slash import COMMANDS, SlashCompleter, dispatch, find, parse
from tests.modelserver import ModelServer, text


@pytest.fixture
def env(server: ModelServer) -> dict[str, str]:
    Path(os.environ["CARETZ_CONFIG"]).write_text(
        json.dumps(
            {
                "profiles": {
                    "general": {"model": "anthropic/claude-main"},
                    "review": {"model": "anthropic/claude-review", "loopGuard": {"mode": "shadow"}},
                }
            }
        )
    )
    return {
        "ANTHROPIC_API_KEY": "sk-test",
        "ANTHROPIC_BASE_URL": server.url,
        "CARETZ_DATA_DIR": os.environ["CARETZ_DATA_DIR"],
        "CARETZ_CONFIG": os.environ["CARETZ_CONFIG"],
    }


@pytest.fixture
def repl(env, tmp_path):
    console = Console(file=io.StringIO(), width=120, color_system=None)
    view = LiveView(console)
    settings = resolve_settings({}, env)
    session = start_session(settings, view, env, workspace=tmp_path)
    running = Repl(session, view, console, env)
    yield running
    running.session.close()


def output(repl: Repl) -> str:
    return repl.console.file.getvalue()


def run(repl: Repl, line: str) -> str:
    """Run a slash command; what it printed."""
    before = len(output(repl))
    assert dispatch(repl, line)
    return output(repl)[before:]


def test_parse_tells_commands_from_messages():
    assert parse("/model openai/gpt-5") == ("model", "openai/gpt-5")
    assert parse("/COST") == ("cost", "")
    assert parse("/etc/hosts has a typo") is None  # a path: a message for the model
    assert parse("fix the /health route") is None
    assert parse("/") is None


def test_find_knows_names_aliases_and_unique_prefixes():
    assert find("quit") is find("exit") is not None
    assert find("he") is find("help")
    assert find("c") is None  # clear, cost, compact: ambiguous
    assert find("frobnicate") is None


def completions(repl: Repl, typed: str) -> list[str]:
    completer = SlashCompleter(repl)
    return [c.text for c in completer.get_completions(Document(typed), CompleteEvent())]


def test_completion_of_names_and_arguments(repl):
    assert completions(repl, "/") == [c.name for c in COMMANDS]
    assert completions(repl, "/loop-") == ["loop-guard"]
    assert completions(repl, "/lo") == ["loop-guard", "loop"]
    assert completions(repl, "/loop-guard s") == ["shadow"]
    assert completions(repl, "/profile ") == ["general", "review"]
    assert "anthropic/claude-review" in completions(repl, "/model anthropic/")
    assert completions(repl, "plain text") == []


def test_model_completion_offers_known_models_the_profiles_and_the_providers(repl):
    offered = completions(repl, "/model ")

    assert offered[:3] == ["anthropic/claude-main", "anthropic/claude-review", "anthropic/"]
    assert "openai/" in offered and "ollama/" in offered
    assert "anthropic/claude-sonnet-4-5" in offered and "openai/gpt-5-mini" in offered
    assert completions(repl, "/model anthropic/claude-haiku-4") == ["anthropic/claude-haiku-4-5"]
    assert completions(repl, "/model openai/gpt-4.1-n") == ["openai/gpt-4.1-nano"]
    assert all(ref.startswith("openai/o") for ref in completions(repl, "/model openai/o"))


def test_unknown_commands_are_refused_without_a_model_call(repl, server):
    assert "unknown command /frobnicate" in run(repl, "/frobnicate")
    assert server.requests == []


def test_clear_starts_a_new_session_and_resume_brings_the_old_one_back(repl, server):
    server.add(text("remembered"))
    repl.run_turn("remember the number 42")
    first = repl.session.id

    said = run(repl, "/clear")

    assert repl.session.id != first and repl.session.agent.conversation.messages == []
    assert f"/resume {first}" in said
    assert first in run(repl, "/sessions")

    said = run(repl, f"/resume {first}")

    assert repl.session.id == first
    assert [m.content for m in repl.session.agent.conversation.messages][:2] == [
        "remember the number 42",
        "remembered",
    ]
    assert "remember the number 42" in said  # the recap of the last exchange
    kinds = [e.type for e in read_events(repl.session.events_path)]
    assert kinds.count("Session.Resumed") == 1
    assert "no session 'nope'" in run(repl, "/resume nope")


def test_profile_switch_and_its_errors(repl):
    said = run(repl, "/profile review")
    assert "profile: review · model anthropic/claude-review · loop guard shadow" in said
    assert repl.session.agent.config.model_ref == "anthropic/claude-review"

    said = run(repl, "/profile nosuch")
    assert "unknown profile 'nosuch'" in said and "still on profile review" in said


def test_loop_guard_command(repl):
    assert "unknown loop-guard mode 'loud'" in run(repl, "/loop-guard loud")
    # off: no guard is built until it is switched on
    assert isinstance(repl.session.agent.parts.guard, NullGuard)
    assert "loop guard: shadow, judged by anthropic/claude-main" in run(repl, "/loop-guard shadow")
    assert isinstance(repl.session.agent.parts.guard, LoopGuard)
    assert repl.session.agent.parts.guard.mode == "shadow"
    assert "loop guard: shadow" in run(repl, "/loop-guard")


def test_model_and_guard_mode_carry_over_to_a_new_session(repl):
    run(repl, "/model anthropic/claude-other")
    run(repl, "/loop-guard active")
    first = repl.session.id

    run(repl, "/clear")

    assert repl.session.id != first
    assert repl.session.agent.config.model_ref == "anthropic/claude-other"
    assert repl.session.agent.parts.guard.mode == "active"


def test_cost_and_compact_on_a_short_conversation(repl, server):
    server.add(text("hi"))
    repl.run_turn("hello")

    said = run(repl, "/cost")
    assert "tokens: 100 in · 20 out" in said and "requests: 1 · tool calls: 0" in said
    assert "nothing to compact yet" in run(repl, "/compact")
    assert len(server.requests) == 1
    # The loop guard's judge asked once (through the session's judge): counted, and apart.
    server.add(text('{"stuck": false, "confidence": 0.2, "reason": "fine"}', usage=(1000, 40, 0)))
    assert repl.session.judge("the turn so far", 30).error is None
    said = run(repl, "/cost")
    assert "tokens: 1,100 in · 60 out" in said
    assert "of which the loop guard's judge: 1 call · 1,000 in · 40 out · cost unknown" in said


def test_exit_stops_the_loop(repl):
    run(repl, "/exit")
    assert repl.running is False


def test_jobs_lists_background_jobs_and_the_session_end_stops_them(repl, tmp_path):
    from tests.sandbox.helpers import marker, sleepers, wait_for

    assert "no background jobs" in run(repl, "/jobs")
    jobs, sandbox = repl.session.jobs, repl.session.sandbox
    mark = marker()
    jobs.start(f"sleep {mark}", tmp_path, sandbox)
    done = jobs.start("exit 3", tmp_path, sandbox)
    assert wait_for(lambda: not done.running and bool(sleepers(mark)), timeout=30)

    shown = run(repl, "/jobs")

    assert "j1" in shown and "running" in shown and f"sleep {mark}" in shown
    assert "j2" in shown and "exited with code 3" in shown
    repl.session.close()
    assert wait_for(lambda: not sleepers(mark), timeout=30)
    assert "j1" in run(repl, "/jobs") and "stopped" in run(repl, "/jobs")
    stopped = [
        e.to_dict() for e in read_events(repl.session.events_path) if e.type == "Jobs.Stopped"
    ]
    assert stopped[0]["jobs"] == ["j1"]


def test_jobs_stop_ends_one_job_and_names_what_is_wrong(repl, tmp_path):
    from tests.sandbox.helpers import marker, sleepers, wait_for

    jobs, sandbox = repl.session.jobs, repl.session.sandbox
    first, second = marker(), marker()
    jobs.start(f"sleep {first}", tmp_path, sandbox)
    jobs.start(f"sleep {second}", tmp_path, sandbox)
    assert wait_for(lambda: bool(sleepers(first)) and bool(sleepers(second)), timeout=30)
    assert completions(repl, "/jobs ") == ["stop", "stop j1", "stop j2"]

    said = run(repl, "/jobs stop j1")

    assert f"stopped job j1: sleep {first}" in said
    assert wait_for(lambda: not sleepers(first), timeout=30)
    assert sleepers(second)  # the other job runs on
    assert completions(repl, "/jobs stop") == ["stop", "stop j2"]
    assert f"job j1 had already ended (stopped): sleep {first}" in run(repl, "/jobs stop j1")
    assert f"stopped job j2: sleep {second}" in run(repl, "/jobs stop 2")  # "2" is j2
    assert "no job 'j7': jobs: j1 (stopped), j2 (stopped)" in run(repl, "/jobs stop j7")
    assert "use /jobs to list the jobs, or /jobs stop ID" in run(repl, "/jobs kill j1")


def test_custom_commands_complete_after_the_built_ins_and_win_over_a_prefix(repl, server):
    folder = repl.session.workspace / ".caretz" / "commands"
    (folder / "frontend").mkdir(parents=True)
    (folder / "frontend" / "test.md").write_text("---\nargument-hint: NAME\n---\nTest $1.")
    (folder / "comp.md").write_text("Compare $ARGUMENTS.")
    repl.custom_catalog = None  # read the folders now
    server.add(text("compared"))

    assert completions(repl, "/fr") == ["frontend:test"]
    assert completions(repl, "/comp") == ["compact", "comp"]
    run(repl, "/comp a b")  # a custom command's full name wins over /compact's prefix
    repl.run_queued()

    assert server.requests[0].messages[-1]["content"] == "Compare a b."
    help_text = run(repl, "/help")
    assert "custom commands" in help_text and "/frontend:test NAME" in help_text


def test_the_names_custom_commands_may_not_take_are_the_sessions_commands():
    from caretz.slash_commands.names import RESERVED_NAMES
    from caretz.ui.slash import builtin_names

    assert sorted(RESERVED_NAMES) == sorted(builtin_names())
