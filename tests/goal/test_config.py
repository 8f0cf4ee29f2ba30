"""The `goal` section: its documented defaults, and how flags override it."""

from __future__ import annotations

from caretz.config.settings import resolve_goal_model, resolve_settings
from caretz.goal.config import EvaluatorConfig, GoalConfig
from tests.config.test_config import DOCS, _check_defaults, _section, _table_defaults


def test_documented_goal_defaults_match_the_code():
    text = DOCS.read_text()
    wrong = _check_defaults(
        GoalConfig, _table_defaults(_section(text, "## `goal`", "`goal.judge` keys:"))
    )
    judge = _section(text, "`goal.judge` keys:", "## Environment variables")
    wrong += _check_defaults(EvaluatorConfig, _table_defaults(judge))
    assert wrong == []


def test_the_evaluator_is_the_goal_judge_else_the_loop_guard_judge_else_the_session_model():
    env = {"ANTHROPIC_API_KEY": "k"}
    session = resolve_settings({}, env)
    judged = resolve_settings({"loop_guard_model": "openai/gpt-judge"}, env)
    named = resolve_settings(
        {"loop_guard_model": "openai/gpt-judge", "goal_model": "anthropic/claude-goal",
         "goal_reasoning": "low", "goal_max_turns": 3}, env
    )  # fmt: skip

    assert resolve_goal_model(session) is None
    assert resolve_goal_model(judged).ref == "openai/gpt-judge"  # type: ignore[union-attr]
    assert resolve_goal_model(named).ref == "anthropic/claude-goal"  # type: ignore[union-attr]
    assert named.goal.judge.reasoning == "low" and named.goal.max_turns == 3


def test_a_pinned_loop_guard_section_replaces_the_profiles(tmp_path):
    import json

    config = tmp_path / "profiles.json"
    config.write_text(
        json.dumps({"profiles": {"general": {"loopGuard": {"mode": "off", "models": []}}}})
    )
    pinned = '{"mode": "active", "checkEvery": 7}'

    settings = resolve_settings(
        {"config": config, "loop_guard_config": pinned, "loop_guard_model": "openai/j"}, {}
    )

    guard = settings.loop_guard
    assert (guard.mode, guard.check_every, guard.models) == ("active", 7, None)
    assert guard.judge.model == "openai/j"  # the other guard flags apply on top


def test_a_bad_pinned_section_is_one_line_naming_the_flag():
    import pytest

    from caretz.config_base import ConfigError

    with pytest.raises(
        ConfigError, match=r"^--loop-guard-config: mode: .*'off', 'shadow' or 'active'"
    ):
        resolve_settings({"loop_guard_config": '{"mode": "loud"}'}, {})


def test_the_example_profiles_spell_out_every_goal_key():
    import json

    from tests.config.test_config import EXAMPLE, _keys, _present

    goal = json.loads(EXAMPLE.read_text())["profiles"]["general"]["goal"]
    assert sorted(key for key in _keys(GoalConfig) if not _present(goal, key)) == []
    GoalConfig.model_validate(goal)
