"""What a new user gets wrong, refused in one line with exit 2: the real CLI end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("caretz: ")
    return lines[0]


@pytest.mark.parametrize("prompt", ["", "   ", "\n\t"])
def test_an_empty_prompt_is_refused(caretz, server, prompt):
    run = caretz("-p", prompt)

    assert run.code == 2
    assert "-p needs a prompt" in one_line(run.stderr)
    assert server.requests == []
    assert not (caretz.data_dir / "sessions").exists()  # no session was started


def last_json_line(stdout: str) -> dict:
    return json.loads(stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    ("args", "env", "words"),
    [
        (["-p", "  "], {}, "-p needs a prompt"),
        (["-p", "hi"], {"ANTHROPIC_API_KEY": None}, "ANTHROPIC_API_KEY"),
        (["-p", "hi", "--reasoning", "max"], {}, "--reasoning"),
        (["-p", "hi", "--max-tool-calls", "lots"], {}, "--max-tool-calls"),
        (["-p", "hi", "--no-such-flag"], {}, "--no-such-flag"),
    ],
)
def test_json_output_ends_with_a_result_even_for_a_usage_error(caretz, server, args, env, words):
    run = caretz(*args, "--output", "json", env=env)

    assert run.code == 2
    result = last_json_line(run.stdout)
    assert result["type"] == "result" and result["exit_code"] == 2
    assert result["status"] == "usage_error" and words in result["message"]
    assert result["session_id"] is None and result["cost_usd"] is None
    assert words in run.stderr and "Traceback" not in run.stderr
    assert server.requests == []


def test_json_output_given_as_one_word_is_seen_too(caretz):
    run = caretz("-p", "hi", "--bogus", "--output=json")

    assert run.code == 2 and last_json_line(run.stdout)["status"] == "usage_error"


@pytest.mark.parametrize(
    ("profile", "key", "expected"),
    [
        ({"maxTokens": True}, "profiles.general.maxTokens", "expected a whole number, not true"),
        ({"maxTokens": 1.5}, "profiles.general.maxTokens", "expected a whole number, not 1.5"),
        (
            {"contextWindow": "200000"},
            "profiles.general.contextWindow",
            'expected a whole number, not "200000"',
        ),
        (
            {"loopGuard": {"detectors": {"streamText": {"enabled": "yes"}}}},
            "profiles.general.loopGuard.detectors.streamText.enabled",
            'expected true or false, not "yes"',
        ),
        (
            {"loopGuard": {"detectors": {"repeatedError": {"enabled": 0}}}},
            "profiles.general.loopGuard.detectors.repeatedError.enabled",
            "expected true or false, not 0",
        ),
        ({"maxBudgetUsd": "5"}, "profiles.general.maxBudgetUsd", 'expected a number, not "5"'),
        ({"systemPrompt": 5}, "profiles.general.systemPrompt", "expected a string, not 5"),
    ],
)
def test_profile_values_must_have_the_type_they_say(caretz, server, profile, key, expected):
    path = caretz.write_config({"profiles": {"general": profile}})

    run = caretz("-p", "hi")

    assert run.code == 2
    assert one_line(run.stderr) == f"caretz: {path}: {key}: {expected}"
    assert server.requests == []


def test_prices_are_numbers(caretz):
    path = caretz.write_config({"prices": {"anthropic/claude-test": {"input": "3", "output": 15}}})

    run = caretz("config", "show")

    assert run.code == 2
    assert one_line(run.stderr) == (
        f'caretz: {path}: prices["anthropic/claude-test"].input: expected a number, not "3"'
    )


@pytest.mark.parametrize("timeout", ["120s", 120, 90.5, "2m", "500ms"])
def test_durations_take_a_number_of_seconds_or_a_unit(caretz, timeout):
    caretz.write_config(
        {"profiles": {"general": {"bashTimeout": timeout, "loopGuard": {"judgeTimeout": timeout}}}}
    )

    run = caretz("config", "show")

    assert run.code == 0, run.stderr


@pytest.mark.parametrize("where", ["a file", "below a file", "in /proc"])
def test_a_data_dir_caretz_cannot_write_is_one_line(caretz, server, tmp_path, where):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file")
    data_dir = {
        "a file": blocker,
        "below a file": blocker / "data",
        "in /proc": "/proc/caretz-data",  # procfs refuses new folders, even to root
    }[where]

    run = caretz("-p", "hi", env={"CARETZ_DATA_DIR": str(data_dir)})

    assert run.code == 2
    line = one_line(run.stderr)
    assert str(data_dir) in line and "CARETZ_DATA_DIR" in line
    assert server.requests == []


def test_listing_sessions_in_a_data_dir_that_is_a_file_says_so(caretz, tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file")

    for args in (["sessions", "list"], ["sessions", "show", "any"]):
        run = caretz(*args, env={"CARETZ_DATA_DIR": str(blocker)})
        assert run.code == 2
        assert "is a file" in one_line(run.stderr)


def test_a_subcommand_usage_error_writes_no_run_result(caretz):
    run = caretz("guard", "replay", "--output", "json")  # FILE is missing

    assert run.code == 2 and run.stdout == ""


@pytest.mark.parametrize("args", [("sessions", "list"), ("config", "show"), ("--help",)])
def test_a_reader_that_stops_early_is_no_failure(caretz, args):
    """`caretz sessions list | head -1`: stdout's reader is gone before caretz writes (its
    end of the pipe closed first, so every write meets EPIPE), which ends quietly with 0."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "caretz", *args],
            cwd=caretz.workspace,
            env=caretz.environment(),
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (0, "")
