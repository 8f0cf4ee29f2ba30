"""Where caretz's files live, and reading profiles.json into a validated ConfigFile."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from caretz.config.errors import describe_validation_error
from caretz.config.schema import ConfigFile
from caretz.config_base import ConfigError

CONFIG_ENV = "CARETZ_CONFIG"
DATA_DIR_ENV = "CARETZ_DATA_DIR"


def config_path(env: Mapping[str, str], flag: str | Path | None = None) -> Path:
    """--config > CARETZ_CONFIG > <user config dir>/profiles.json."""
    if flag:
        return Path(flag).expanduser()
    if env.get(CONFIG_ENV):
        return Path(env[CONFIG_ENV]).expanduser()
    from platformdirs import user_config_dir

    return Path(user_config_dir("caretz")) / "profiles.json"


def data_dir(env: Mapping[str, str]) -> Path:
    """CARETZ_DATA_DIR > the platform's user data dir. Nothing is created here."""
    if env.get(DATA_DIR_ENV):
        return Path(env[DATA_DIR_ENV]).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("caretz"))


def load_config_file(path: Path, *, required: bool = False) -> ConfigFile:
    """Read and validate profiles.json; a missing file means defaults unless `required`."""
    if required and not path.exists():
        raise ConfigError(f"{path}: no such file (named by --config)")
    data = read_json_file(path)
    if data is None:
        return ConfigFile()
    try:
        return ConfigFile.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{path}: {describe_validation_error(ConfigFile, exc)}") from None


def read_json_file(path: Path) -> Any:
    """The JSON in `path`, None when there is no such file or it is empty; a ConfigError
    naming the file when it cannot be read or is not JSON."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(f"{path}: cannot read the file: {reason}") from None
    if not text.strip():
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"(line {exc.lineno}, column {exc.colno})"
        raise ConfigError(f"{path}: not valid JSON: {exc.msg} {where}") from None
