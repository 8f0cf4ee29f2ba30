"""profiles.json + CARETZ_* env + flags → Settings, with real files in tmp dirs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from caretz.config.loading import config_path, data_dir, load_config_file
from caretz.config.overrides import Flags
from caretz.config.settings import resolve_judge_model, resolve_settings
from caretz.config.show import show_settings
from caretz.config_base import ConfigError
from caretz.guard.config import LoopGuardConfig
from caretz.providers.registry import BUILTIN_PROVIDERS, ProviderEntry
from caretz.providers.resolve import DEFAULT_MODEL, api_key_for, merged_providers, resolve_model

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "profiles.example.json"
DOCS = REPO / "docs" / "configuration.md"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path


def write_config(home: Path, data: Any) -> Path:
    path = home / "profiles.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def env_for(home: Path, **extra: str) -> dict[str, str]:
    return {
        "CARETZ_CONFIG": str(home / "profiles.json"),
        "CARETZ_DATA_DIR": str(home / "data"),
        **extra,
    }


def resolve(home: Path, data: Any = None, flags: Flags | None = None, **env: str):
    if data is not None:
        write_config(home, data)
    return resolve_settings(flags or {}, env_for(home, **env))


def config_error(home: Path, data: Any = None, flags: Flags | None = None, **env: str) -> str:
    with pytest.raises(ConfigError) as caught:
        resolve(home, data, flags, **env)
    message = str(caught.value)
    assert "\n" not in message
    return message


# ------------------------------------------------------------ defaults, paths


def test_no_file_gives_the_documented_defaults(home: Path) -> None:
    settings = resolve(home)
    assert settings.profile_name == "general"
    assert settings.model.ref == DEFAULT_MODEL == "anthropic/claude-sonnet-4-5"
    assert settings.model.entry.base_url == "https://api.anthropic.com"
    assert settings.model.model_id == "claude-sonnet-4-5"
    # The default model thinks: reasoning, window and output limit come from its family.
    assert (settings.reasoning, settings.output) == ("medium", "text")
    assert (settings.context_window, settings.max_tokens) == (200_000, 32_000)
    assert settings.max_tool_calls is None and settings.max_budget_usd is None
    assert settings.bash_timeout_s == 120.0
    assert settings.values.stream_idle_timeout_s == 50.0  # streamIdleTimeout
    assert settings.values.first_byte_timeout_s == 50.0  # firstByteTimeout
    assert settings.loop_guard == LoopGuardConfig()
    assert settings.config_path == home / "profiles.json"
    assert settings.data_dir == home / "data"


def test_config_path_flag_beats_env_beats_platform_dir(home: Path) -> None:
    from platformdirs import user_config_dir

    env = {"CARETZ_CONFIG": str(home / "env.json")}
    assert config_path(env, str(home / "flag.json")) == home / "flag.json"
    assert config_path(env) == home / "env.json"
    assert config_path({}) == Path(user_config_dir("caretz")) / "profiles.json"


def test_data_dir_env_beats_platform_dir(home: Path) -> None:
    from platformdirs import user_data_dir

    assert data_dir({"CARETZ_DATA_DIR": str(home / "d")}) == home / "d"
    assert data_dir({}) == Path(user_data_dir("caretz"))


def test_import_and_resolve_create_nothing(tmp_path: Path) -> None:
    fake_home = tmp_path / "home"
    fake_home.mkdir()
    script = (
        "import os\n"
        "from caretz.config.settings import resolve_settings\n"
        "resolve_settings({}, dict(os.environ))\n"
    )
    env = {"HOME": str(fake_home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-c", script], env=env, check=True, cwd=tmp_path)
    assert list(fake_home.iterdir()) == []


def test_missing_file_named_by_env_is_fine_but_by_flag_is_an_error(home: Path) -> None:
    assert resolve(home).profile_name == "general"
    missing = home / "nowhere.json"
    message = config_error(home, flags=dict(config=str(missing)))
    assert str(missing) in message and "--config" in message


def test_explicit_config_flag_is_read(home: Path) -> None:
    other = home / "other.json"
    other.write_text(json.dumps({"profiles": {"general": {"reasoning": "high"}}}))
    settings = resolve(home, flags=dict(config=str(other)))
    assert settings.config_path == other and settings.reasoning == "high"


# ------------------------------------------------------------- precedence


PRECEDENCE_CASES = [
    # (profile key, file value, env var, env value, flag field, flag value, Settings attribute)
    ("model", "openai/gpt-4o", "CARETZ_MODEL", "openai/gpt-5", "model", "groq/llama-3", None),
    ("reasoning", "low", "CARETZ_REASONING", "medium", "reasoning", "high", "reasoning"),
    ("maxToolCalls", 10, "CARETZ_MAX_TOOL_CALLS", "20", "max_tool_calls", 30, "max_tool_calls"),
    ("maxBudgetUsd", 1.5, "CARETZ_MAX_BUDGET_USD", "2.5", "max_budget_usd", 3.5, "max_budget_usd"),
]


def _value(settings: Any, attribute: str | None) -> Any:
    return settings.model.ref if attribute is None else getattr(settings, attribute)


@pytest.mark.parametrize("key,in_file,env_var,in_env,flag,in_flag,attribute", PRECEDENCE_CASES)
def test_flag_beats_env_beats_profile_beats_default(
    home: Path, key, in_file, env_var, in_env, flag, in_flag, attribute
) -> None:
    default = _value(resolve(home), attribute)
    write_config(home, {"profiles": {"general": {key: in_file}}})
    from_file = _value(resolve(home), attribute)
    from_env = _value(resolve(home, **{env_var: in_env}), attribute)
    from_flag = _value(resolve(home, flags={flag: in_flag}, **{env_var: in_env}), attribute)
    assert from_file == in_file != default
    assert str(from_env) == in_env
    assert from_flag == in_flag


def test_loop_guard_mode_flag_beats_env_beats_profile(home: Path) -> None:
    write_config(home, {"profiles": {"general": {"loopGuard": {"mode": "shadow"}}}})
    assert resolve(home).loop_guard.mode == "shadow"
    assert resolve(home, CARETZ_LOOP_GUARD="active").loop_guard.mode == "active"
    flagged = resolve(home, flags=dict(loop_guard="off"), CARETZ_LOOP_GUARD="active")
    assert flagged.loop_guard.mode == "off"


def test_output_flag_beats_profile(home: Path) -> None:
    write_config(home, {"profiles": {"general": {"output": "json"}}})
    assert resolve(home).output == "json"
    assert resolve(home, flags=dict(output="detailed")).output == "detailed"


def test_empty_env_value_counts_as_unset(home: Path) -> None:
    write_config(home, {"profiles": {"general": {"reasoning": "low"}}})
    assert resolve(home, CARETZ_REASONING="").reasoning == "low"


def test_profile_chosen_by_flag_then_env_then_general(home: Path) -> None:
    write_config(
        home,
        {
            "profiles": {
                "general": {"reasoning": "low"},
                "deep": {"reasoning": "high"},
                "cheap": {"reasoning": "off", "model": "openai/gpt-5-nano"},
            }
        },
    )
    assert resolve(home).profile_name == "general"
    assert resolve(home, CARETZ_PROFILE="deep").reasoning == "high"
    chosen = resolve(home, flags=dict(profile="cheap"), CARETZ_PROFILE="deep")
    assert (chosen.profile_name, chosen.model.ref) == ("cheap", "openai/gpt-5-nano")


def test_overrides_land_in_the_settings_profile(home: Path) -> None:
    write_config(
        home, {"profiles": {"general": {"systemPrompt": "Be brief.", "bashTimeout": "5m"}}}
    )
    settings = resolve(home, flags=dict(reasoning="high"))
    assert settings.profile.reasoning == "high"
    assert settings.system_prompt == settings.profile.system_prompt == "Be brief."
    assert settings.bash_timeout_s == 300.0


# ------------------------------------------------------------ errors


def test_unknown_profile_lists_the_file_profiles_and_the_source(home: Path) -> None:
    data = {"profiles": {"general": {}, "local": {}}}
    message = config_error(home, data, flags=dict(profile="fast"))
    assert "'fast'" in message and "--profile" in message
    assert "general, local" in message and str(home / "profiles.json") in message
    assert "CARETZ_PROFILE" in config_error(home, CARETZ_PROFILE="fast")


def test_unknown_profile_without_a_file_says_the_file_is_missing(home: Path) -> None:
    message = config_error(home, flags=dict(profile="work"))
    assert "'work'" in message and "does not exist" in message
    assert str(home / "profiles.json") in message


def test_invalid_json_names_file_line_and_column(home: Path) -> None:
    message = config_error(home, '{\n  "profiles": {\n    "general": {"model": }\n  }\n}')
    path = str(home / "profiles.json")
    assert message.startswith(f"{path}: not valid JSON: ")
    assert "(line 3, column" in message


def test_validation_error_names_the_dotted_camel_case_key(home: Path) -> None:
    data = {"profiles": {"general": {"loopGuard": {"repeatThreshold": 0}}}}
    message = config_error(home, data)
    expected = f"{home / 'profiles.json'}: profiles.general.loopGuard.repeatThreshold: "
    assert message.startswith(expected)
    assert "greater than or equal to 1" in message


def test_typo_is_an_unknown_key_with_a_suggestion(home: Path) -> None:
    data = {"profiles": {"general": {"loopGuard": {"repeatTreshold": 3}}}}
    message = config_error(home, data)
    assert "profiles.general.loopGuard.repeatTreshold: unknown key" in message
    assert "did you mean 'repeatThreshold'" in message


def test_typo_deep_in_detectors_is_named(home: Path) -> None:
    data = {"profiles": {"x": {"loopGuard": {"detectors": {"identicalCall": {"warnStrek": 2}}}}}}
    message = config_error(home, data)
    assert "profiles.x.loopGuard.detectors.identicalCall.warnStrek: unknown key" in message


def test_union_tags_are_not_part_of_the_path(home: Path) -> None:
    message = config_error(home, {"profiles": {"general": {"loopGuard": {"judgeTimeout": [1]}}}})
    assert "profiles.general.loopGuard.judgeTimeout: " in message
    assert "judgeTimeout.str" not in message


def test_bad_duration_and_bad_list_item(home: Path) -> None:
    message = config_error(home, {"profiles": {"general": {"bashTimeout": "soon"}}})
    assert "profiles.general.bashTimeout: 'soon' is not a duration" in message
    message = config_error(home, {"profiles": {"general": {"loopGuard": {"models": ["a", 3]}}}})
    assert "profiles.general.loopGuard.models[1]: " in message


def test_price_keys_with_dots_are_quoted_in_the_path(home: Path) -> None:
    message = config_error(home, {"prices": {"openai/gpt-4.1*": {"input": -1, "output": 1}}})
    assert 'prices["openai/gpt-4.1*"].input: ' in message


def test_top_level_typo(home: Path) -> None:
    message = config_error(home, {"profile": {}})
    assert "profile: unknown key (did you mean 'profiles'?)" in message


def test_bad_env_value_names_the_variable(home: Path) -> None:
    message = config_error(home, CARETZ_MAX_TOOL_CALLS="lots")
    assert message.startswith("CARETZ_MAX_TOOL_CALLS='lots': ")
    assert "CARETZ_LOOP_GUARD" in config_error(home, CARETZ_LOOP_GUARD="loud")


def test_bad_flag_value_names_the_flag(home: Path) -> None:
    assert config_error(home, flags=dict(reasoning="max")).startswith("--reasoning 'max': ")
    message = config_error(home, flags=dict(loop_guard_check_every=-1))
    assert message.startswith("--loop-guard-check-every -1: ")
    message = config_error(home, flags=dict(base_url="localhost:8080"))
    assert message.startswith("--base-url ") and "http://" in message


def test_bad_model_ref_names_its_source(home: Path) -> None:
    message = config_error(home, flags=dict(model="nosuch/model-1"))
    assert message.startswith("--model: unknown provider 'nosuch'")
    assert "anthropic" in message and "openai" in message
    assert f'add one under "providers" in {home / "profiles.json"}' in message
    message = config_error(home, CARETZ_MODEL="claude-sonnet-4-5")
    assert message.startswith("CARETZ_MODEL: ")
    assert "write provider/model, e.g. anthropic/claude-" in message and "--base-url" in message
    message = config_error(home, {"profiles": {"general": {"model": "gpt-5"}}})
    assert message.startswith(f"{home / 'profiles.json'}: profiles.general.model: ")


# ------------------------------------------------------------ model refs


def test_model_id_may_contain_slashes() -> None:
    resolved = resolve_model("openrouter/qwen/qwen3-coder:free", BUILTIN_PROVIDERS, None, {})
    assert resolved.entry.name == "openrouter"
    assert resolved.model_id == "qwen/qwen3-coder:free"
    assert resolved.ref == "openrouter/qwen/qwen3-coder:free"


def test_env_base_url_then_flag_base_url() -> None:
    env = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9999"}
    via_env = resolve_model("anthropic/claude-x", BUILTIN_PROVIDERS, None, env)
    assert via_env.entry.base_url == "http://127.0.0.1:9999"
    via_flag = resolve_model("anthropic/claude-x", BUILTIN_PROVIDERS, "http://gw:1/v1", env)
    assert via_flag.entry.base_url == "http://gw:1/v1"
    assert via_flag.entry.api_key_env == "ANTHROPIC_API_KEY"


def test_bare_model_with_base_url_is_an_ad_hoc_openai_endpoint_without_foreign_keys(
    home: Path,
) -> None:
    settings = resolve(
        home,
        flags=dict(model="qwen3-coder", base_url="http://127.0.0.1:8080/v1"),
        OPENAI_API_KEY="sk-openai-secret",
        ANTHROPIC_API_KEY="sk-ant-secret",
    )
    entry = settings.model.entry
    assert (entry.name, entry.protocol, entry.base_url) == (
        "custom",
        "openai",
        "http://127.0.0.1:8080/v1",
    )
    assert settings.model.ref == settings.model.model_id == "qwen3-coder"
    assert entry.api_key_env is None
    assert api_key_for(entry, {"OPENAI_API_KEY": "sk-openai-secret"}) is None


def test_ad_hoc_endpoint_gets_caretz_api_key_only(home: Path) -> None:
    env = {"CARETZ_API_KEY": "local-key", "OPENAI_API_KEY": "sk-openai-secret"}
    resolved = resolve_model("llama", BUILTIN_PROVIDERS, "http://127.0.0.1:1/v1", env)
    assert api_key_for(resolved.entry, env) == "local-key"


def test_profile_base_url_serves_bare_ids_but_not_another_providers_model(home: Path) -> None:
    write_config(
        home,
        {"profiles": {"general": {"model": "qwen3", "baseUrl": "http://127.0.0.1:8080/v1"}}},
    )
    assert resolve(home).model.entry.base_url == "http://127.0.0.1:8080/v1"
    other_bare = resolve(home, flags=dict(model="llama3"))
    assert other_bare.model.entry.base_url == "http://127.0.0.1:8080/v1"
    hosted = resolve(home, flags=dict(model="openai/gpt-5"))
    assert hosted.model.entry.base_url == "https://api.openai.com/v1"
    assert hosted.profile.base_url is None


def test_file_providers_extend_and_override_builtins(home: Path) -> None:
    write_config(
        home,
        {
            "profiles": {"general": {"model": "vllm/org/model-7b"}},
            "providers": {
                "vllm": {"protocol": "openai", "baseUrl": "http://10.0.0.2:8000/v1/"},
                "openai": {
                    "protocol": "openai",
                    "baseUrl": "https://proxy.example/v1",
                    "apiKeyEnv": "PROXY_KEY",
                    "headers": {"X-Team": "a"},
                },
            },
        },
    )
    settings = resolve(home)
    assert settings.model.entry.base_url == "http://10.0.0.2:8000/v1"
    assert settings.model.model_id == "org/model-7b"
    assert settings.model.entry.api_key_env is None
    assert settings.providers["openai"].api_key_env == "PROXY_KEY"
    assert settings.providers["openai"].headers == {"X-Team": "a"}
    assert settings.providers["anthropic"] == BUILTIN_PROVIDERS["anthropic"]


def test_provider_name_with_slash_is_rejected(home: Path) -> None:
    data = {"providers": {"a/b": {"protocol": "openai", "baseUrl": "http://x"}}}
    assert "providers: provider name 'a/b'" in config_error(home, data)


def test_api_key_for() -> None:
    entry = BUILTIN_PROVIDERS["anthropic"]
    assert api_key_for(entry, {"ANTHROPIC_API_KEY": "k1"}) == "k1"
    with pytest.raises(ConfigError) as caught:
        api_key_for(entry, {"OPENAI_API_KEY": "k2"})
    message = str(caught.value)
    assert message.startswith(
        "missing API key for provider 'anthropic': set ANTHROPIC_API_KEY, or take another way "
        "in: OPENAI_API_KEY is set: --model openai/gpt-5.1; "  # a key that is set comes first
    )
    assert "\n" not in message and "k2" not in message
    assert api_key_for(BUILTIN_PROVIDERS["ollama"], {}) is None


def test_merged_providers_apply_base_url_env() -> None:
    providers = merged_providers({}, {"OPENAI_BASE_URL": "http://127.0.0.1:7/v1/"})
    assert providers["openai"].base_url == "http://127.0.0.1:7/v1"
    assert providers["groq"] == BUILTIN_PROVIDERS["groq"]


# ------------------------------------------------------------ loop guard and judge


GUARDED = {
    "profiles": {
        "general": {
            "loopGuard": {
                "mode": "shadow",
                "checkEvery": 20,
                "models": ["strata/*", "*/qwen*next*"],
                "judge": {"model": "anthropic/claude-opus-4-5", "reasoning": "high"},
            }
        }
    }
}


def test_loop_guard_flag_and_env_change_the_mode_but_keep_models(home: Path) -> None:
    write_config(home, GUARDED)
    for settings in (
        resolve(home, flags=dict(loop_guard="active")),
        resolve(home, CARETZ_LOOP_GUARD="active"),
    ):
        assert settings.loop_guard.mode == "active"
        assert settings.loop_guard.models == ["strata/*", "*/qwen*next*"]
        assert settings.loop_guard.judge.model == "anthropic/claude-opus-4-5"


def test_loop_guard_model_replaces_the_judge_including_reasoning(home: Path) -> None:
    write_config(home, GUARDED)
    judge = resolve(home, flags=dict(loop_guard_model="openai/gpt-5")).loop_guard.judge
    assert (judge.model, judge.reasoning) == ("openai/gpt-5", None)
    both = dict(loop_guard_model="openai/gpt-5", loop_guard_reasoning="low")
    judge = resolve(home, flags=both).loop_guard.judge
    assert (judge.model, judge.reasoning) == ("openai/gpt-5", "low")


def test_loop_guard_reasoning_alone_changes_the_configured_judge(home: Path) -> None:
    write_config(home, GUARDED)
    judge = resolve(home, flags=dict(loop_guard_reasoning="low")).loop_guard.judge
    assert (judge.model, judge.reasoning) == ("anthropic/claude-opus-4-5", "low")


def test_loop_guard_check_every_flag(home: Path) -> None:
    write_config(home, GUARDED)
    assert resolve(home).loop_guard.check_every == 20
    assert resolve(home, flags=dict(loop_guard_check_every=0)).loop_guard.check_every == 0


def test_overrides_do_not_leak_into_the_loaded_file_objects(home: Path) -> None:
    write_config(home, GUARDED)
    file = load_config_file(home / "profiles.json")
    assert file.profiles["general"].loop_guard.mode == "shadow"
    resolve(home, flags=dict(loop_guard="active", loop_guard_model="openai/gpt-5"))
    assert resolve(home).loop_guard.judge.reasoning == "high"


def test_resolve_judge_model(home: Path) -> None:
    assert resolve_judge_model(resolve(home)) is None
    write_config(home, GUARDED)
    judge = resolve_judge_model(resolve(home, ANTHROPIC_BASE_URL="http://127.0.0.1:5"))
    assert judge is not None
    assert (judge.entry.name, judge.model_id) == ("anthropic", "claude-opus-4-5")
    assert judge.entry.base_url == "http://127.0.0.1:5"


def test_unknown_judge_fails_at_start_up_naming_where_it_was_set(home: Path) -> None:
    settings = resolve(home, flags=dict(loop_guard_model="strata/big"))
    with pytest.raises(ConfigError) as caught:
        resolve_judge_model(settings)
    assert str(caught.value).startswith("--loop-guard-model: unknown provider 'strata'")

    write_config(home, {"profiles": {"general": {"loopGuard": {"judge": {"model": "judge-1"}}}}})
    with pytest.raises(ConfigError) as caught:
        resolve_judge_model(resolve(home))
    assert "profiles.general.loopGuard.judge.model: model 'judge-1' names no provider" in str(
        caught.value
    )


def test_bare_judge_runs_on_the_sessions_ad_hoc_endpoint(home: Path) -> None:
    flags = dict(model="small", base_url="http://127.0.0.1:8/v1", loop_guard_model="big")
    settings = resolve(home, flags=flags)
    judge = resolve_judge_model(settings)
    assert judge is not None
    assert (judge.entry.name, judge.entry.base_url, judge.model_id) == (
        "custom",
        "http://127.0.0.1:8/v1",
        "big",
    )


# ------------------------------------------------------------ config show


def test_show_settings_never_shows_key_values(home: Path) -> None:
    write_config(
        home,
        {
            "providers": {
                "gw": {
                    "protocol": "anthropic",
                    "baseUrl": "https://gw.example",
                    "apiKeyEnv": "GW_KEY",
                    "headers": {"Authorization": "Bearer header-secret-123"},
                }
            }
        },
    )
    env = env_for(home, ANTHROPIC_API_KEY="sk-ant-very-secret", GW_KEY="gw-secret-456")
    settings = resolve_settings({}, env)
    shown = show_settings(settings, env)
    text = json.dumps(shown)
    for secret in ("sk-ant-very-secret", "gw-secret-456", "header-secret-123"):
        assert secret not in text
    assert "sk-ant" not in repr(settings)
    providers = shown["providers"]
    assert providers["anthropic"]["apiKeyEnv"] == "ANTHROPIC_API_KEY"
    assert providers["anthropic"]["apiKey"] == "set"
    assert providers["openai"]["apiKey"] == "not set"
    assert providers["ollama"]["apiKey"] == "not needed"
    assert providers["gw"]["headers"] == ["Authorization"]
    assert shown["model"]["ref"] == DEFAULT_MODEL and shown["model"]["apiKey"] == "set"
    limits = {key: shown["model"][key] for key in ("contextWindow", "maxTokens", "reasoning")}
    assert limits == {"contextWindow": 200_000, "maxTokens": 32_000, "reasoning": "medium"}
    assert shown["contextWindow"] is None  # the profile's own value: unset
    assert shown["loopGuard"]["repeatThreshold"] == 3
    assert shown["profile"] == "general"


def test_show_settings_shows_profile_values_under_their_profile_keys(home: Path) -> None:
    from caretz.config.schema import Profile

    write_config(home, {"profiles": {"general": {"bashTimeout": "5m", "maxTokens": 100}}})
    shown = show_settings(resolve(home, flags={"reasoning": "high"}), {})
    assert (shown["bashTimeout"], shown["maxTokens"], shown["reasoning"]) == ("5m", 100, "high")
    assert "bashTimeoutSeconds" not in shown
    profile_keys = {field.alias for field in Profile.model_fields.values()}
    resolved_under_model = {"model", "baseUrl", "toolChoice"}
    assert profile_keys - resolved_under_model <= set(shown)
    assert shown["model"]["baseUrl"] == "https://api.anthropic.com"


# ------------------------------------------------------------ the example file


def test_example_file_loads_every_profile_and_judge() -> None:
    data = json.loads(EXAMPLE.read_text())
    assert {"general", "providers", "prices"} <= set(data["profiles"]) | set(data)
    assert len(data["profiles"]) >= 2
    env = {"CARETZ_DATA_DIR": "/nonexistent/caretz"}
    for name in data["profiles"]:
        settings = resolve_settings(dict(config=str(EXAMPLE), profile=name), env)
        assert settings.profile_name == name
        resolve_judge_model(settings)
    local = resolve_settings(dict(config=str(EXAMPLE), profile="local"), env)
    assert local.model.entry.name in data["providers"]
    assert local.prices


def _keys(model: type[BaseModel]) -> set[str]:
    """Every camelCase key of a section, nested ones as dotted paths."""
    keys: set[str] = set()
    for name, field in model.model_fields.items():
        key = field.alias or name
        keys.add(key)
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            keys |= {f"{key}.{sub}" for sub in _keys(annotation)}
    return keys


def _present(data: dict[str, Any], dotted: str) -> bool:
    for part in dotted.split("."):
        if not isinstance(data, dict) or part not in data:
            return False
        data = data[part]
    return True


def test_example_file_spells_out_every_loop_guard_key() -> None:
    guard = json.loads(EXAMPLE.read_text())["profiles"]["general"]["loopGuard"]
    missing = sorted(key for key in _keys(LoopGuardConfig) if not _present(guard, key))
    assert missing == [], f"add these keys to profiles.example.json: {missing}"


def test_docs_describe_every_key() -> None:
    from caretz.config.schema import ConfigFile, PriceEntry, Profile, ProviderConfig
    from caretz.mcp_client.config import McpConfig
    from caretz.sandbox.config import SandboxConfig
    from caretz.web.config import WebFetchConfig, WebSearchConfig

    text = DOCS.read_text()
    wanted = {key.split(".")[-1] for key in _keys(LoopGuardConfig)}
    models = (ConfigFile, Profile, ProviderConfig, PriceEntry, SandboxConfig, McpConfig)
    for model in (*models, WebFetchConfig, WebSearchConfig):
        wanted |= {key.split(".")[-1] for key in _keys(model) if "." not in key}
    missing = sorted(key for key in wanted if f"`{key}`" not in text)
    assert missing == [], f"document these keys in docs/configuration.md: {missing}"
    for env_var in (
        "CARETZ_CONFIG",
        "CARETZ_DATA_DIR",
        "CARETZ_PROFILE",
        "CARETZ_MODEL",
        "CARETZ_REASONING",
        "CARETZ_MAX_TOOL_CALLS",
        "CARETZ_MAX_BUDGET_USD",
        "CARETZ_LOOP_GUARD",
        "CARETZ_SANDBOX",
        "CARETZ_API_KEY",
    ):
        assert env_var in text


def test_local_provider_needs_no_key() -> None:
    entry = resolve_model("ollama/qwen3", BUILTIN_PROVIDERS, None, {}).entry
    assert isinstance(entry, ProviderEntry)
    assert api_key_for(entry, {}) is None


def _table_defaults(text: str) -> dict[str, str]:
    """`key` → its Default cell, from the markdown tables in `text`."""
    rows = re.findall(r"^\| `(\w+)` \| [^|]+ \| ([^|]+) \|", text, flags=re.MULTILINE)
    return {key: cell.strip() for key, cell in rows}


def _section(text: str, start: str, end: str | None = None) -> str:
    body = text.split(start, 1)[1]
    if end is not None:
        return body.split(end, 1)[0]
    return re.split(r"\n#{1,4} ", body, maxsplit=1)[0]


def _check_defaults(model: type[BaseModel], documented: dict[str, str]) -> list[str]:
    wrong = []
    for name, field in model.model_fields.items():
        key = field.alias or name
        default = model().model_dump(mode="json")[name]
        cell = documented.get(key, "")
        literal = cell[1:-1] if cell.startswith("`") and cell.endswith("`") else None
        if isinstance(default, dict) and default and literal is None:
            continue  # a nested section, described by its own table
        if isinstance(default, str) and literal is None:
            continue  # a long text, described in words
        try:
            matches = literal is not None and json.loads(literal) == default
        except json.JSONDecodeError:
            matches = False
        if not matches:
            wrong.append(
                f"{model.__name__}.{key}: code has {json.dumps(default)}, docs say {cell!r}"
            )
    return wrong


def test_documented_defaults_match_the_code() -> None:
    from caretz.config.schema import Profile
    from caretz.guard.config import JudgeConfig
    from caretz.guard.detectors_config import DetectorsConfig
    from caretz.sandbox.config import SandboxConfig
    from caretz.web.config import WebFetchConfig, WebSearchConfig

    text = DOCS.read_text()
    wrong = _check_defaults(Profile, _table_defaults(_section(text, "### Profile keys")))
    guard_text = _section(text, "## `loopGuard`", "`judge` keys:")
    wrong += _check_defaults(LoopGuardConfig, _table_defaults(guard_text))
    judge_text = _section(text, "`judge` keys:", "### From the command line")
    wrong += _check_defaults(JudgeConfig, _table_defaults(judge_text))
    sandbox_text = _section(text, "## `sandbox`", "## `mcp`")
    wrong += _check_defaults(SandboxConfig, _table_defaults(sandbox_text))
    fetch_text = _section(text, "`webFetch` keys:", "`webSearch` keys:")
    wrong += _check_defaults(WebFetchConfig, _table_defaults(fetch_text))
    search_text = _section(text, "`webSearch` keys:", "## Environment variables")
    wrong += _check_defaults(WebSearchConfig, _table_defaults(search_text))
    for name, field in DetectorsConfig.model_fields.items():
        key = field.alias or name
        section = _section(text, f"#### `{key}`")
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            wrong += _check_defaults(annotation, _table_defaults(section))
    assert wrong == [], "update docs/configuration.md: " + "; ".join(wrong)


def test_docs_list_every_builtin_provider() -> None:
    text = DOCS.read_text()
    for name, entry in BUILTIN_PROVIDERS.items():
        assert f"| `{name}` | {entry.protocol} | `{entry.base_url}` |" in text
