"""Local-model and request-default settings in profiles.json, resolved without starting anything."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from caretz.config.schema import LocalConfig
from caretz.config.settings import resolve_settings
from caretz.config.show import show_settings
from caretz.config_base import ConfigError
from caretz.providers.local import DEFAULT_LOAD_TIMEOUT_S, LocalModel


def settings_for(home: Path, config: dict[str, Any] | None = None, **cli: Any):
    path = home / "profiles.json"
    if config is not None:
        path.write_text(json.dumps(config))
    env = {"CARETZ_CONFIG": str(path), "CARETZ_DATA_DIR": str(home / "data")}
    return resolve_settings(cli, env)


def config_error(home: Path, config: dict[str, Any], **cli: Any) -> str:
    with pytest.raises(ConfigError) as caught:
        settings_for(home, config, **cli)
    return str(caught.value)


def test_builtin_local_provider_takes_the_path_from_the_model_ref(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, model="local/~/models/qwen3-4b.gguf")

    entry = settings.model.entry
    assert entry.name == "local" and entry.protocol == "openai"
    assert entry.local == LocalModel()
    assert entry.api_key_env is None
    assert settings.model.model_id == "~/models/qwen3-4b.gguf"


def test_named_local_provider_resolves_paths_from_the_config_folder(tmp_path: Path) -> None:
    config = {
        "providers": {
            "smol": {
                "local": {
                    "model": "models/smol.gguf",
                    "chatTemplate": "templates/mine.jinja",
                    "contextSize": 4096,
                    "threads": 2,
                    "loadTimeout": "90s",
                },
                "extraBody": {"temperature": 0},
            }
        },
        "profiles": {"general": {"model": "smol/smollm2"}},
    }

    entry = settings_for(tmp_path, config).model.entry

    assert entry.protocol == "openai"  # the default with a local section
    assert entry.local == LocalModel(
        model=str(tmp_path / "models/smol.gguf"),
        chat_template=str(tmp_path / "templates/mine.jinja"),
        context_size=4096,
        threads=2,
        load_timeout_s=90.0,
    )
    assert entry.extra_body == {"temperature": 0}


def test_the_shipped_template_name_and_absolute_paths_stay_as_written(tmp_path: Path) -> None:
    config = {
        "providers": {
            "smol": {
                "protocol": "anthropic",
                "local": {"model": "/srv/models/a.gguf", "chatTemplate": "chatml-tools"},
            }
        }
    }

    entry = settings_for(tmp_path, config, model="smol/a").model.entry

    assert entry.protocol == "anthropic"
    assert entry.local is not None
    assert entry.local.model == "/srv/models/a.gguf"
    assert entry.local.chat_template == "chatml-tools"
    assert entry.local.load_timeout_s == DEFAULT_LOAD_TIMEOUT_S


def test_a_provider_needs_a_base_url_or_a_local_section(tmp_path: Path) -> None:
    message = config_error(tmp_path, {"providers": {"vllm": {"protocol": "openai"}}})
    assert message.endswith(
        "providers.vllm: baseUrl is required (or a local section for a GGUF model caretz "
        "runs itself)"
    )
    assert "protocol and baseUrl are required" in config_error(
        tmp_path, {"providers": {"vllm": {}}}
    )


def test_a_provider_cannot_have_both_a_base_url_and_a_local_section(tmp_path: Path) -> None:
    config = {
        "providers": {
            "x": {"protocol": "openai", "baseUrl": "http://127.0.0.1:8080/v1", "local": {}}
        }
    }
    assert "providers.x: set either baseUrl" in config_error(tmp_path, config)


@pytest.mark.parametrize(
    ("local", "key"),
    [
        ({"contextSize": 10}, "contextSize"),
        ({"threads": 0}, "threads"),
        ({"loadTimeout": "0s"}, "loadTimeout"),
        ({"gpuLayers": 3}, "gpuLayers"),
    ],
)
def test_bad_local_keys_name_the_key(tmp_path: Path, local: dict[str, Any], key: str) -> None:
    message = config_error(tmp_path, {"providers": {"smol": {"local": local}}})
    assert f"providers.smol.local.{key}" in message


def test_provider_tool_choice_and_prefix_reach_the_entry(tmp_path: Path) -> None:
    config = {
        "providers": {
            "gw": {
                "protocol": "openai",
                "baseUrl": "http://127.0.0.1:9/v1",
                "toolChoice": "required",
                "toolCallPrefix": "<tool_call>\n",
            }
        }
    }

    entry = settings_for(tmp_path, config, model="gw/m").model.entry

    assert (entry.tool_choice, entry.tool_call_prefix) == ("required", "<tool_call>\n")


def test_profile_tool_choice_replaces_the_providers(tmp_path: Path) -> None:
    config = {
        "providers": {
            "gw": {"protocol": "openai", "baseUrl": "http://127.0.0.1:9/v1", "toolChoice": "auto"}
        },
        "profiles": {"general": {"model": "gw/m", "toolChoice": "required"}},
    }

    settings = settings_for(tmp_path, config)

    assert settings.model.entry.tool_choice == "required"
    assert settings.providers["gw"].tool_choice == "auto"  # the provider itself is unchanged


def test_an_empty_tool_choice_is_refused(tmp_path: Path) -> None:
    message = config_error(tmp_path, {"profiles": {"general": {"toolChoice": ""}}})
    assert "profiles.general.toolChoice" in message


def test_a_base_url_flag_sends_a_local_provider_to_that_server(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, model="local/m.gguf", base_url="http://127.0.0.1:8080/v1")

    entry = settings.model.entry
    assert entry.local is None and entry.base_url == "http://127.0.0.1:8080/v1"


def test_config_show_describes_the_local_server(tmp_path: Path) -> None:
    config = {
        "providers": {
            "smol": {"local": {"model": "/m/smol.gguf", "threads": 2}, "toolChoice": "required"}
        }
    }
    settings = settings_for(tmp_path, config, model="smol/s")

    shown = show_settings(settings, {})["model"]

    assert shown["local"]["model"] == "/m/smol.gguf" and shown["local"]["threads"] == 2
    assert shown["toolChoice"] == "required"
    assert "loopback" in shown["baseUrl"]


def test_config_show_names_the_local_keys_as_the_profile_spells_them(tmp_path: Path) -> None:
    config = {"providers": {"smol": {"local": {"model": "/m/s.gguf", "loadTimeout": "90s"}}}}
    shown = show_settings(settings_for(tmp_path, config, model="smol/s"), {})["model"]["local"]

    profile_keys = {field.alias or name for name, field in LocalConfig.model_fields.items()}
    assert set(shown) <= profile_keys, set(shown) - profile_keys
    assert shown["loadTimeout"] == "90s"
    again = {"providers": {"smol": {"local": {"model": "/m/s.gguf", **shown}}}}
    assert settings_for(tmp_path, again, model="smol/s").model.entry.local.load_timeout_s == 90
