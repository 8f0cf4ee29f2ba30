"""--env-file: keys from a file only its owner can read; anything looser is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from caretz.config.env_file import apply_env_file, read_env_file
from caretz.config_base import ConfigError


def test_a_private_file_is_read_and_set_variables_keep_their_value(tmp_path):
    path = tmp_path / "keys.env"
    path.write_text("# keys\nANTHROPIC_API_KEY=sk-ant-from-file\nexport FOO='bar baz'\n")
    path.chmod(0o600)
    env = {"FOO": "already"}

    apply_env_file(path, env)

    assert env == {"FOO": "already", "ANTHROPIC_API_KEY": "sk-ant-from-file"}
    assert read_env_file(path)["FOO"] == "bar baz"


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o620, 0o606])
def test_a_file_others_may_read_or_change_is_refused(tmp_path, mode):
    path = tmp_path / "keys.env"
    path.write_text("KEY=secret\n")
    path.chmod(mode)

    with pytest.raises(ConfigError, match=f"chmod 600 {path}"):
        read_env_file(path)


def test_a_missing_file_or_a_folder_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="no such file"):
        read_env_file(tmp_path / "missing.env")
    with pytest.raises(ConfigError, match="not a regular file"):
        read_env_file(tmp_path)


def test_a_file_of_another_user_is_refused(tmp_path):
    path = Path("/etc/passwd")  # root's, for anyone but root
    if os.getuid() == 0:
        path = tmp_path / "keys.env"
        path.write_text("KEY=secret\n")
        path.chmod(0o600)
        os.chown(path, 65534, 65534)  # nobody's

    with pytest.raises(ConfigError, match="owned by another user"):
        read_env_file(path)
