"""Output normalization and failure fingerprints: what changes between runs goes, what differs stays."""

from __future__ import annotations

import pytest

from caretz.guard.model import ToolObservation
from caretz.guard.normalize import (
    call_signature,
    error_line,
    failure_fingerprint,
    normalize_output,
)


def failed(output: str, tool: str = "bash", exit_code: int | None = 1) -> ToolObservation:
    return ToolObservation(
        index=0,
        tool=tool,
        args={"command": "go test ./..."},
        output=output,
        failed=True,
        exit_code=exit_code,
    )


def go_build_failure(path: str, line: int, column: int, seconds: str) -> str:
    return (
        "# example.com/app/db [example.com/app/db.test]\n"
        f"{path}:{line}:{column}: undefined: testDB\n"
        "FAIL\texample.com/app/db [build failed]\n"
        f"ok  \texample.com/app/api\t{seconds}\n"
        "FAIL\n"
    )


def test_go_failures_differing_in_path_line_and_timing_share_the_documented_fingerprint():
    runs = [
        go_build_failure("./db_test.go", 12, 2, "0.012s"),
        go_build_failure("/home/ann/src/app/db/db_test.go", 31, 9, "1.204s"),
        go_build_failure("/tmp/go-build3412/b001/db_test.go", 7, 1, "(cached)"),
    ]
    fingerprints = {failure_fingerprint(failed(output)) for output in runs}
    assert fingerprints == {"Bash: <path>/db_test.go:N: undefined: testDB"}


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("./db_test.go:12:2: undefined: testDB", "./db_test.go:12:2: undefined: testConn"),
        ("ValueError: bad port", "KeyError: 'port'"),
        ("ValueError: bad port", "ValueError: bad host"),
        (
            "FAILED tests/test_db.py::test_connect - assert 2 == 1",
            "FAILED tests/test_db.py::test_close - assert 2 == 1",
        ),
        ("--- FAIL: TestConnect (0.00s)", "--- FAIL: TestClose (0.01s)"),
        ("E111 indentation is not a multiple of 4", "E999 SyntaxError: invalid syntax"),
    ],
)
def test_genuinely_different_errors_keep_different_fingerprints(first: str, second: str):
    assert failure_fingerprint(failed(first)) != failure_fingerprint(failed(second))


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("rootdir: /tmp/pytest-of-ann/pytest-12/test_x0", "rootdir: <path>/test_x0"),
        ("wrote /var/folders/x1/abc123/T/out.txt", "wrote <path>/out.txt"),
        ("WORK=/tmp/go-build2210938", "WORK=<path>/go-build<N>"),
        ("open /tmp/tmpa8x_2kq3", "open <path>/<tmp>"),
        ("cd pytest-of-ann/pytest-7", "cd pytest-of-<user>/pytest-N"),
        ('File "/usr/lib/python3.11/json/decoder.py", line 355, in raw_decode',
         'File "<path>/decoder.py", line N, in raw_decode'),
        ("src/main.rs:12:5: error", "src/main.rs:N: error"),
        ("at Object.<anonymous> (app.test.js:14:9)", "at Object.<anonymous> (app.test.js:N)"),
        ("2024-05-01T12:03:04.123Z started", "<time> started"),
        ("2024/05/01 12:03:04 listening", "<time> listening"),
        ("[12:03:04] done", "[<time>] done"),
        ("released on 2024-05-01", "released on <date>"),
        ("ok  \texample.com/app\t0.012s", "ok example.com/app <dur>"),
        ("--- FAIL: TestX (0.53s)", "--- FAIL: TestX (<dur>)"),
        ("1 failed, 2 passed in 3.04 seconds", "1 failed, 2 passed in <dur>"),
        ("real\t0m1.234s", "real <dur>"),
        ("took 250ms", "took <dur>"),
        ("<Foo object at 0x7f3a2b1c4d50>", "<Foo object at 0x<addr>>"),
        ("main.go:12 +0x1d", "main.go:N +0x<off>"),
        ("id 123e4567-e89b-12d3-a456-426614174000", "id <id>"),
        ("commit a1b2c3d4e5f60718", "commit <hex>"),
        ("server pid=4312 exited", "server pid=<pid> exited"),
        ("goroutine 17 [running]:", "goroutine N [running]:"),
        ("GET http://localhost:54321/health", "GET http://localhost:<port>/health"),
        ("dial tcp 127.0.0.1:38211: refused", "dial tcp 127.0.0.1:<port>: refused"),
        ("\x1b[31mFAILED\x1b[0m", "FAILED"),
    ],
)  # fmt: skip
def test_normalize_output_replaces_what_changes_between_runs(raw: str, normalized: str):
    assert normalize_output(raw) == normalized


@pytest.mark.parametrize(
    "text",
    [
        "pytest-8.0.0, pluggy-1.4.0",
        "assert integrate(log(S(1)/2 - x)) == -S(1)/2",
        "see pkg/db/db_test.go for details",
        "expected 3, got 4",
        "https://example.com/docs/page",
        "test_tmp_path_factory",
    ],
)
def test_normalize_output_leaves_stable_text_alone(text: str):
    assert normalize_output(text) == text


def test_error_line_prefers_the_exception_at_the_end_of_a_traceback():
    output = (
        "Traceback (most recent call last):\n"
        '  File "/app/run.py", line 3, in <module>\n'
        '    raise ValueError("bad value")\n'
        "ValueError: bad value\n"
    )
    assert error_line(output) == "ValueError: bad value"


def test_error_line_takes_pytests_explanation_over_the_truncated_summary():
    output = (
        ">       result = get_sky_diffuse(tilt, azimuth, ghi, solar_zenith=zenith)\n"
        "E       TypeError: get_sky_diffuse() got multiple values for argument 'solar_zenith'\n"
        "\n"
        "tests/test_perez.py:18: TypeError\n"
        "=========================== short test summary info ============================\n"
        "FAILED tests/test_perez.py::test_perez - TypeError: get...\n"
        "======================== 1 failed, 2 warnings in 0.12s =========================\n"
    )
    expected = "TypeError: get_sky_diffuse() got multiple values for argument 'solar_zenith'"
    assert error_line(output) == expected


def test_error_line_skips_summaries_markup_and_code_listings():
    assert error_line("<returncode>1</returncode>\n<output>\n</output>") == ""
    listing = (
        "ERRORS:\n- E111 indentation is not a multiple of 4\n1744:    raise NotImplementedError()\n"
    )
    assert error_line(listing) == "- E111 indentation is not a multiple of 4"
    assert error_line("building\nFAIL\texample.com/app [build failed]\nFAIL\n") == "building"


@pytest.mark.parametrize(
    ("output", "telling"),
    [
        ("Error: <line> must be less than or equal to 13", "Error: <line> must be less than or equal to 13"),
        ('print(f"Error running: {e}")\nFAIL: bar.py was ignored\n', "FAIL: bar.py was ignored"),
        ("django.db.utils.OperationalError: no such table\nexit status 1", "django.db.utils.OperationalError: no such table"),
        ("/bin/bash: line 1: syntax error near unexpected token `('\n/bin/bash: line 1: `x()'",
         "/bin/bash: line 1: syntax error near unexpected token `('"),
        ("conftest.py:6: DeprecationWarning: old\nall done", "conftest.py:6: DeprecationWarning: old"),
    ],
)  # fmt: skip
def test_error_line_picks_the_diagnosis(output: str, telling: str):
    assert error_line(output) == telling


def test_error_line_falls_back_to_the_last_non_empty_line():
    assert error_line("step one\nEXECUTION TIMED OUT\n\n") == "EXECUTION TIMED OUT"


def test_the_number_of_other_failing_tests_is_part_of_the_fingerprint():
    two = "FAILED t.py::test_a - KeyError: 'x'\nFAILED t.py::test_b - KeyError: 'x'\n"
    one = "FAILED t.py::test_b - KeyError: 'x'\n"
    assert failure_fingerprint(failed(two)) == "Bash: FAILED t.py::test_b - KeyError: 'x' (+1 more)"
    assert failure_fingerprint(failed(one)) == "Bash: FAILED t.py::test_b - KeyError: 'x'"


def test_fingerprint_names_the_tool_and_stays_short():
    long_error = "RuntimeError: " + "x" * 1000
    fingerprint = failure_fingerprint(failed(long_error, tool="edit"))
    assert fingerprint.startswith("Edit: RuntimeError: ")
    assert len(fingerprint) < 220
    assert failure_fingerprint(failed("", exit_code=2)) == "Bash: go test <path>/... → exit 2"
    assert failure_fingerprint(failed("", exit_code=None)) == "Bash: go test <path>/... → no output"


def test_caretz_own_notes_never_stand_for_the_failure():
    assert failure_fingerprint(failed("boom\n[exit code 1]")) == "Bash: boom"
    silent = "(no output)\n[exit code 1]"
    first = ToolObservation(
        index=0,
        tool="bash",
        args={"command": "test -f a.txt"},
        output=silent,
        failed=True,
        exit_code=1,
    )
    second = ToolObservation(
        index=1,
        tool="bash",
        args={"command": "grep -q needle b.txt"},
        output=silent,
        failed=True,
        exit_code=1,
    )
    assert failure_fingerprint(first) == "Bash: test -f a.txt → exit 1"
    assert failure_fingerprint(first) != failure_fingerprint(second)


def test_call_signature_sorts_keys_and_tells_arguments_apart():
    assert call_signature("read", {"path": "a.py", "limit": 5}) == call_signature(
        "read", {"limit": 5, "path": "a.py"}
    )
    assert call_signature("read", {"path": "a.py"}) == 'read({"path":"a.py"})'
    assert call_signature("read", {"path": "a.py"}) != call_signature("read", {"path": "b.py"})
    assert call_signature("read", {"path": "a.py"}) != call_signature("write", {"path": "a.py"})
