"""The command's options read without pydantic (caretz/cli_options.py): the same values
Typer's own reading gives, and pydantic imported only for a value that needs converting."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

READ = """
import json, sys
import typer.main
from caretz.cli import app
ctx = typer.main.get_command(app).make_context("caretz", sys.argv[1:])
params = {k: (str(v) if isinstance(v, __import__("pathlib").Path) else v) for k, v in ctx.params.items()}
print(json.dumps({"params": params, "pydantic": "pydantic" in sys.modules}))
"""


def read(*args: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", READ, *args], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def test_strings_and_options_not_given_are_read_without_pydantic():
    got = read("-p", "hello", "--model", "anthropic/x", "--add-dir", "a", "--add-dir", "b")

    assert got["pydantic"] is False
    params = got["params"]
    assert (params["prompt"], params["model"], params["add_dir"]) == (
        "hello",
        "anthropic/x",
        ["a", "b"],
    )
    assert params["profile"] is None and params["max_tool_calls"] is None
    assert params["allowed_tools"] == [] and params["continue_"] is False


def test_a_value_to_convert_goes_to_typers_own_reading(tmp_path: Path):
    got = read("-p", "hi", "--max-tool-calls", "7", "--config", str(tmp_path / "p.json"))

    assert got["params"]["max_tool_calls"] == 7
    assert got["params"]["config"] == str(tmp_path / "p.json")
    assert got["pydantic"] is True  # Typer's adapter, for the int and the path


def test_a_bad_value_is_refused_in_typers_words():
    done = subprocess.run(
        [sys.executable, "-c", READ, "-p", "hi", "--max-budget-usd", "lots"],
        capture_output=True,
        text=True,
    )

    assert done.returncode != 0  # Typer's own error, in its words
    assert "BadParameter: Input should be a valid number" in done.stderr
