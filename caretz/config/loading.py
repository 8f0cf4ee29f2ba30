"""Where caretz's files live, and reading profiles.json into a validated ConfigFile.

Reading the JSON needs no pydantic; validating it does, and imports it then.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import platformdirs

from caretz import private_data
from caretz.config_base import ConfigError
from caretz.lazy import lazy_module

if TYPE_CHECKING:
    import pydantic

    from caretz.config import errors as config_errors
    from caretz.config import schema
else:
    # Validating a file: pydantic and the schema, loaded only when there is one to validate.
    pydantic = lazy_module("pydantic")
    config_errors = lazy_module("caretz.config.errors")
    schema = lazy_module("caretz.config.schema")

if TYPE_CHECKING:
    from caretz.config.schema import ConfigFile

CONFIG_ENV = "CARETZ_CONFIG"
DATA_DIR_ENV = "CARETZ_DATA_DIR"


def config_path(env: Mapping[str, str], flag: str | Path | None = None) -> Path:
    """--config > CARETZ_CONFIG > <user config dir>/profiles.json."""
    if flag:
        return Path(flag).expanduser()
    if env.get(CONFIG_ENV):
        return Path(env[CONFIG_ENV]).expanduser()
    return Path(platformdirs.user_config_dir("caretz")) / "profiles.json"


def data_dir(env: Mapping[str, str]) -> Path:
    """CARETZ_DATA_DIR > the platform's user data dir, closed to other users when an older
    caretz left it open (private_data.py); nothing is created here. A ConfigError for a
    folder that is not this user's to close."""
    if env.get(DATA_DIR_ENV):
        path = Path(env[DATA_DIR_ENV]).expanduser()
    else:
        path = Path(platformdirs.user_data_dir("caretz"))
    try:
        return private_data.private_root(path)
    except private_data.NotPrivate as refusal:
        raise ConfigError(f"{refusal}: point {DATA_DIR_ENV} at a folder of your own") from None
    except OSError:
        return path  # one caretz cannot use: the session store names what is wrong


def load_config_file(path: Path, *, required: bool = False) -> ConfigFile:
    """Read and validate profiles.json; a missing file means defaults unless `required`."""
    return validated_config_file(path, read_json_file(path, required=required))


def validated_config_file(path: Path, data: Any) -> ConfigFile:
    """profiles.json's JSON (`data`; None: no file, the defaults) validated."""
    file_type = schema.ConfigFile
    if data is None:
        return file_type()
    try:
        return file_type.model_validate(data)
    except pydantic.ValidationError as exc:
        problem = config_errors.describe_validation_error(file_type, exc)
        raise ConfigError(f"{path}: {problem}") from None


def read_json_file(path: Path, *, required: bool = False) -> Any:
    """The JSON in `path`, None when there is no such file or it is empty; a ConfigError
    naming the file when it cannot be read or is not JSON, or is `required` (named by
    --config) and missing."""
    if required and not path.exists():
        raise ConfigError(f"{path}: no such file (named by --config)")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the file: {unreadable(exc)}") from None
    return parse_json(path, text)


def unreadable(exc: OSError | UnicodeDecodeError) -> str:
    """Why a file could not be read, for its one line."""
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)


def parse_json(path: Path, text: str) -> Any:
    """The JSON in `text` (`path`'s), None when it is empty; a ConfigError naming the
    file when it is not JSON."""
    if not text.strip():
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"(line {exc.lineno}, column {exc.colno})"
        raise ConfigError(f"{path}: not valid JSON: {exc.msg} {where}") from None
    except RecursionError:
        raise ConfigError(f"{path}: not valid JSON: nested too deep") from None
