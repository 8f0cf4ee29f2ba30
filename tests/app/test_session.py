"""`caretz.app.session.AppSession` driven directly: turns, custom commands, goals, switches
and opening, against the loopback model server, with real bash and real session logs."""

from __future__ import annotations

import json

import pytest

from caretz.app.session import AppSession
from caretz.config.settings import resolve_settings
from caretz.config_base import ConfigError
from caretz.session.events import read_events
from tests.app.conftest import MODEL, Recorder, sessions_folder, write_profiles
from tests.modelserver import Reply, error, text, tool
from tests.trusting import trust_project


def verdict(met: bool, reason: str) -> Reply:
    body = {"met": met, "impossible": False, "reason": reason, "next_step": "carry on"}
    return text(json.dumps(body))


def test_a_tool_turn_runs_the_command_and_answers(open_session, server, workspace):
    server.add(tool("bash", command="echo made > out.txt && cat out.txt"), text("Wrote it."))
    view = Recorder()
    session = open_session(view)

    outcome = session.submit("write out.txt")

    assert (outcome.status, outcome.exit_code, outcome.text) == ("done", 0, "Wrote it.")
    assert outcome.sent and outcome.goal is None
    assert (workspace / "out.txt").read_text() == "made\n"
    result = next(e for e in view.events if e.type == "Tool.Result")
    assert result.ok and "made" in result.output
    assert view.text == "Wrote it."
    assert session.totals.tool_calls == 1 and session.totals.requests == 2
    logged = [e.type for e in read_events(session.events_path)]
    assert logged[0] == "Session.Started" and logged.count("Turn.Ended") == 1


def test_a_custom_command_runs_on_its_model_then_the_session_carries_on(
    open_session, server, workspace
):
    commands = workspace / ".caretz" / "commands"
    commands.mkdir(parents=True)
    (commands / "quick.md").write_text("---\nmodel: anthropic/small-model\n---\nQuick: $1")
    server.add(text("Quick answer."), model="small-model")
    server.add(text("Back."), model=MODEL)
    session = open_session()

    outcome = session.submit("/quick first second")
    after = session.submit("and now?")

    assert (outcome.status, outcome.text) == ("done", "Quick answer.")
    assert after.text == "Back."
    assert [r.model for r in server.requests] == ["small-model", MODEL]
    assert server.requests[0].messages[-1]["content"] == "Quick: first"
    assert session.agent.config.model_ref == f"anthropic/{MODEL}"


def test_a_slash_name_that_is_no_custom_command_sends_nothing(open_session, server):
    session = open_session()

    unknown = session.submit("/nosuch thing")
    builtin = session.submit("/model anthropic/other")

    assert (unknown.status, unknown.exit_code, unknown.sent) == ("usage_error", 2, False)
    assert unknown.message.startswith("unknown command /nosuch: no custom command of that name")
    assert unknown.message.endswith("(nothing was sent)") and "\n" not in unknown.message
    assert "is a command of the interactive session" in builtin.message
    assert server.requests == []


def test_a_goal_met_on_its_second_turn(open_session, server, workspace):
    server.add(
        text("Nothing written yet."),
        verdict(False, "done.txt does not exist"),
        tool("bash", command="echo ok > done.txt"),
        text("Wrote done.txt."),
        verdict(True, "done.txt says ok"),
    )
    session = open_session()

    outcome = session.start_goal("done.txt says ok")

    assert (outcome.status, outcome.exit_code) == ("met", 0)
    assert outcome.text == "Wrote done.txt."
    assert outcome.goal is not None and outcome.goal["turns"] == 2
    assert session.goal is not None and session.goal.status == "met"
    assert (workspace / "done.txt").read_text() == "ok\n"
    goal_events = [e.type for e in read_events(session.events_path) if e.type[:5] == "Goal."]
    assert goal_events[0] == "Goal.Set" and goal_events[-1] == "Goal.Ended"
    assert goal_events.count("Goal.Evaluated") == 2


def test_a_paused_goal_carries_on_in_the_resumed_session(open_session, server):
    server.add(error(400, "scripted failure"))
    first = open_session()
    paused = first.start_goal("the work is done")
    assert (paused.status, paused.exit_code) == ("paused", 1)
    first.close()
    server.add(text("Done now."), verdict(True, "the work is done"))

    resumed = open_session(resume=first.id)
    assert resumed.goal is not None and resumed.goal.status == "paused"
    outcome = resumed.resume_goal()

    assert (outcome.status, outcome.exit_code, outcome.text) == ("met", 0, "Done now.")
    assert server.requests[-2].messages[-1]["content"].startswith("[goal] Automated message")
    assert resumed.resume_goal().status == "usage_error"  # nothing paused any more


def test_a_switch_that_fails_changes_nothing(open_session, server):
    session = open_session()
    provider, model = session.agent.parts.provider, session.agent.config.model_ref

    with pytest.raises(ConfigError, match="unknown provider 'nowhere'"):
        session.switch(model="nowhere/model")
    with pytest.raises(ConfigError, match="unknown loop-guard mode"):
        session.switch(guard_mode="sometimes")

    assert session.agent.parts.provider is provider
    assert session.agent.config.model_ref == session.settings.model.ref == model
    assert session.settings.loop_guard.mode == "off"
    changed = [e for e in read_events(session.events_path) if e.type == "Session.Changed"]
    assert changed == []


def test_a_switch_says_what_changed_and_the_next_turn_goes_to_the_new_model(open_session, server):
    session = open_session()
    server.add(text("from other"), model="claude-other")

    line = session.switch(model="anthropic/claude-other")
    outcome = session.submit("hello")

    assert line == "model: anthropic/claude-other; the conversation carries on"
    assert outcome.text == "from other"
    assert session.switch(permission_mode="read-only") == "permissions: read-only"
    with pytest.raises(ValueError):
        session.switch(model="anthropic/a", guard_mode="off")


SEARCH_LINE = "- web search: web_search searches the web (the model provider's own search)"


def test_a_model_switch_brings_the_providers_own_search_and_the_prompts_lines_with_it(
    open_session, server, env, config
):
    write_profiles(config, {"general": {"webSearch": {"server": True, "maxUses": 2}}})
    env.update(OPENAI_API_KEY="sk-openai-test", OPENAI_BASE_URL=server.openai_url)
    session = open_session()
    server.add(text("other"), model="claude-other")
    server.add(text("chat"), model="gpt-4.1")
    server.add(text("back"))

    session.switch(model="anthropic/claude-other")
    session.submit("on another Anthropic model")
    session.switch(model="openai/gpt-4.1")  # Chat Completions: no search of its own
    session.submit("on a model without one")
    session.switch(model=f"anthropic/{MODEL}")
    session.submit("back")

    other, chat, back = server.requests
    search = {"type": "web_search_20250305", "name": "web_search", "max_uses": 2}
    assert other.body["tools"][0] == search and SEARCH_LINE in other.system
    assert "web_search" not in chat.tool_names and "web_search" not in chat.system
    assert "web_fetch reads a URL" in chat.system
    assert back.body["tools"][0] == search and back.system == other.system


def test_a_profile_switch_offers_the_providers_own_search_as_the_new_profiles_rules_say(
    open_session, server, config
):
    search_on = {"webSearch": {"server": True, "maxUses": 2}}
    denied = {**search_on, "permissions": {"deny": ["WebSearch"]}}
    write_profiles(config, {"general": search_on, "careful": denied})
    session = open_session()
    server.add(text("careful"), text("general"))

    session.switch(profile="careful")
    session.submit("with WebSearch denied")
    session.switch(profile="general")
    session.submit("and allowed again")

    careful, general = server.requests
    assert "web_search" not in careful.tool_names
    assert {"type": "web_search_20250305", "name": "web_search", "max_uses": 2} in (
        general.body["tools"]
    )


def test_opening_with_a_bad_profile_leaves_no_session_folder(env, workspace, config):
    write_profiles(config, {"general": {"model": "anthropic/claude-test"}})
    bad = resolve_settings({}, env)
    bad_env = {**env, "ANTHROPIC_API_KEY": ""}  # the profile's model has no key

    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        AppSession.open(bad, Recorder(), env=bad_env, workspace=workspace)
    write_profiles(config, {"general": {"permissions": {"allow": ["Bash(unclosed"]}}})
    with pytest.raises(ConfigError, match="profiles.general.permissions"):
        AppSession.open(resolve_settings({}, env), Recorder(), env=env, workspace=workspace)

    assert not sessions_folder(env).exists() or list(sessions_folder(env).iterdir()) == []


def test_a_commands_allowed_tools_hold_for_its_turn_only(open_session, server, workspace):
    commands = workspace / ".caretz" / "commands"
    commands.mkdir(parents=True)
    (commands / "stamp.md").write_text("---\nallowed-tools: Bash(touch:*)\n---\nStamp it.")
    trust_project(workspace)  # a project's command grants its tools once approved
    server.add(tool("bash", command="touch by-command.txt"), text("Stamped."))
    server.add(tool("bash", command="touch by-turn.txt"), text("Tried."))
    session = open_session(permission_mode="ask")  # nobody to ask: what no rule allows is denied

    stamped = session.submit("/stamp")
    tried = session.submit("now you")

    assert stamped.text == "Stamped." and (workspace / "by-command.txt").exists()
    assert tried.text == "Tried." and not (workspace / "by-turn.txt").exists()
    assert [d["tool"] for d in session.permission_denials] == ["bash"]
    assert session.permissions.rules.rules == ()  # the session's own rules never changed


def test_reopen_leaves_this_session_for_a_new_one_in_its_own_log(open_session, server):
    first = open_session()
    server.add(text("hello"))
    first.submit("hi")

    second = first.reopen()
    server.add(text("fresh"))
    outcome = second.submit("again")

    assert second.id != first.id and outcome.text == "fresh"
    assert server.requests[-1].messages[0]["content"] == "again"  # an empty conversation
    logged = [e.type for e in read_events(second.events_path)]
    assert logged[0] == "Session.Started" and logged.count("Turn.Started") == 1
    first_log = [e.type for e in read_events(first.events_path)]
    assert first_log.count("Turn.Started") == 1  # the second session writes its own log
    second.close()
