"""Changing a live session: /model, /profile and /loop-guard (caretz.runtime), for real.

Real sessions against the loopback model server; nothing is faked.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from caretz.config.settings import resolve_settings
from caretz.config_base import ConfigError
from caretz.guard.guard import LoopGuard
from caretz.guard.seam import NullGuard
from caretz.runtime.session import start_session
from caretz.runtime.switches import apply_settings, set_guard_mode, switch_model
from caretz.session.events import read_events
from tests.agent.test_compaction import Recorder
from tests.modelserver import ModelServer, text

NOT_STUCK = json.dumps({"stuck": False, "confidence": 0.2, "reason": "progress", "try_instead": ""})


@pytest.fixture
def env(server: ModelServer) -> dict[str, str]:
    return {
        "ANTHROPIC_API_KEY": "sk-test",
        "ANTHROPIC_BASE_URL": server.url,
        "CARETZ_DATA_DIR": os.environ["CARETZ_DATA_DIR"],
        "CARETZ_CONFIG": os.environ["CARETZ_CONFIG"],
    }


@pytest.fixture
def config(env) -> Path:
    path = Path(env["CARETZ_CONFIG"])
    path.write_text(
        json.dumps(
            {
                "profiles": {
                    "general": {"model": "anthropic/claude-main"},
                    "strict": {
                        "model": "anthropic/claude-strict",
                        "maxToolCalls": 7,
                        "systemPrompt": "Answer in one line.",
                        "loopGuard": {"mode": "active"},
                    },
                    "judged": {
                        "model": "anthropic/claude-main",
                        "loopGuard": {"judge": {"model": "openai/gpt-judge"}},
                    },
                }
            }
        )
    )
    return path


def open_session(env, workspace: Path, profile: str | None = None):
    settings = resolve_settings(dict(profile=profile), env)
    return start_session(settings, Recorder(), env, workspace=workspace)


def test_switching_the_model_sends_the_next_turn_to_it(env, config, tmp_path, server):
    session = open_session(env, tmp_path)
    server.add(text("from main"), model="claude-main")
    server.add(text("from other"), model="claude-other")
    session.agent.run_turn("first")

    assert switch_model(session, "anthropic/claude-other", env) == "anthropic/claude-other"
    session.agent.run_turn("second")

    assert [r.model for r in server.requests] == ["claude-main", "claude-other"]
    assert [m["content"] for m in server.requests[1].messages][0] == "first"
    changed = [e.to_dict() for e in read_events(session.events_path) if e.type == "Session.Changed"]
    assert changed[-1]["model"] == "anthropic/claude-other" and changed[-1]["change"] == "model"


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("nowhere/model", "unknown provider 'nowhere'"),
        ("openai/gpt-x", "missing API key for provider 'openai': set OPENAI_API_KEY"),
        ("bare-id", "names no provider"),
    ],
)
def test_a_model_that_cannot_be_used_changes_nothing(env, config, tmp_path, ref, message):
    session = open_session(env, tmp_path)
    provider = session.agent.parts.provider

    with pytest.raises(ConfigError, match=message):
        switch_model(session, ref, env)

    assert session.agent.parts.provider is provider
    assert session.agent.config.model_ref == session.settings.model.ref == "anthropic/claude-main"


def test_turning_the_guard_on_mid_session_builds_a_judge_that_follows_the_model(
    env, config, tmp_path, server
):
    session = open_session(env, tmp_path)
    assert isinstance(session.agent.parts.guard, NullGuard)  # off: built when switched on
    switch_model(session, "anthropic/claude-other", env)

    set_guard_mode(session, "active")

    assert isinstance(session.agent.parts.guard, LoopGuard)
    assert session.agent.parts.guard.mode == "active"
    assert session.settings.loop_guard.mode == "active"
    server.add(text(NOT_STUCK), model="claude-other")
    result = session.judge("a summary of a turn", 5.0)
    assert result.error is None and result.verdict.stuck is False
    assert server.requests[-1].model == "claude-other"  # the judge asked the current model


def test_a_judge_without_its_key_leaves_the_guard_as_it_was(env, config, tmp_path):
    session = open_session(env, tmp_path, profile="judged")

    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        set_guard_mode(session, "shadow")

    assert isinstance(session.agent.parts.guard, NullGuard)
    assert session.settings.loop_guard.mode == "off"


def test_a_configured_judge_without_its_key_still_fails_at_start_up(env, config, tmp_path):
    settings = resolve_settings(dict(profile="judged", loop_guard="shadow"), env)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        start_session(settings, Recorder(), env, workspace=tmp_path)


def test_switching_profile_rewires_model_guard_limits_and_prompt(env, config, tmp_path, server):
    session = open_session(env, tmp_path)
    server.add(text("main"), model="claude-main")
    session.agent.run_turn("first")

    apply_settings(session, resolve_settings(dict(profile="strict"), env), env)
    server.add(text("strict"), model="claude-strict")
    session.agent.run_turn("second")

    agent = session.agent
    assert agent.config.model_ref == "anthropic/claude-strict"
    assert isinstance(agent.parts.guard, LoopGuard) and agent.parts.guard.mode == "active"
    assert agent.config.limits.max_tool_calls == 7
    assert session.settings.profile_name == "strict"
    request = server.requests[-1]
    assert request.model == "claude-strict"
    assert "Answer in one line." in request.system
    assert [m["content"] for m in request.messages if m["role"] == "user"] == ["first", "second"]
