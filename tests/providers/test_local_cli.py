"""`caretz --model local/…` when the model cannot be run: one line, exit code 2.

These need no llama.cpp: they stop before a model would load.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture
def gguf(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF\x03\x00\x00\x00")
    return path


def caretz(*args: str, cwd: Path, pythonpath: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if pythonpath is not None:
        root = Path(__file__).resolve().parents[2]
        env["PYTHONPATH"] = os.pathsep.join([str(pythonpath), str(root)])
    return subprocess.run(
        [sys.executable, "-m", "caretz", *args],
        cwd=cwd,
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_without_the_local_extra_one_line_says_how_to_install_it(tmp_path: Path, gguf: Path):
    shadow = tmp_path / "without-llama"
    shadow.mkdir()
    (shadow / "xllamacpp.py").write_text("raise ImportError('No module named xllamacpp')\n")

    run = caretz("-p", "hi", "--model", f"local/{gguf}", cwd=tmp_path, pythonpath=shadow)

    assert run.returncode == 2
    last = run.stderr.strip().splitlines()[-1]
    assert last == (
        f"caretz: local/{gguf}: local models need llama.cpp's server (xllamacpp), which is "
        "not installed: pip install 'caretz[local]'"
    )
    assert "Traceback" not in run.stderr


def test_a_missing_model_file_is_one_line_naming_it(tmp_path: Path):
    installed = tmp_path / "with-llama"  # the check for the file comes after the one for xllamacpp
    installed.mkdir()
    (installed / "xllamacpp.py").write_text("")

    run = caretz(
        "-p", "hi", "--model", "local/models/nope.gguf", cwd=tmp_path, pythonpath=installed
    )

    assert run.returncode == 2
    assert run.stderr.strip() == (
        f"caretz: local/models/nope.gguf: model file {tmp_path / 'models/nope.gguf'} does not exist"
    )
