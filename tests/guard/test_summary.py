"""The judge's summary: the documented contents, bounded in size, secrets redacted."""

from __future__ import annotations

import pytest

from caretz.guard.model import Firing, ToolObservation, TurnContext, Verdict
from caretz.guard.record import TurnRecord
from caretz.guard.summary import build_summary, is_short_follow_up
from caretz.messages import Message, Usage
from caretz.secrets import redact


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


TASK = "make the integration tests pass"
GO_ERROR = "./db_test.go:12:2: undefined: testDB\nFAIL\texample.com/app/db [build failed]\n"
REPEAT = Firing(
    detector="repeat",
    fingerprint="Bash: <path>/db_test.go:N: undefined: testDB",
    headline="repeat: 3× Bash: <path>/db_test.go:N: undefined: testDB",
    step=5,
)


def bash(index: int, command: str, output: str, failed: bool, **kw) -> ToolObservation:
    return ToolObservation(
        index=index,
        tool="bash",
        args={"command": command},
        output=output,
        failed=failed,
        exit_code=int(failed),
        **kw,
    )


def record_of(task: str = TASK, **ctx) -> tuple[TurnRecord, Clock]:
    clock = Clock()
    return TurnRecord.start(TurnContext(task=task, model_ref="test/model", **ctx), clock), clock


def go_turn() -> tuple[TurnRecord, Clock]:
    record, clock = record_of()
    record.add_response(
        Message(role="assistant", content="I'll run the tests first."),
        Usage(input_tokens=1200, output_tokens=80),
    )
    record.add_call(bash(0, "go test ./...", GO_ERROR, True))
    record.add_call(
        ToolObservation(
            index=1,
            tool="read",
            args={"path": "db/db_test.go"},
            output="package db\n",
            failed=False,
        )
    )
    record.add_response(
        Message(role="assistant", content="testDB is missing; I'll add it."),
        Usage(input_tokens=1500, output_tokens=90),
    )
    record.add_call(
        ToolObservation(
            index=2, tool="edit", args={"path": "db/db.go", "old": "a", "new": "b"}, output="ok", failed=False,
            files_changed=("db/db.go",),
        )
    )  # fmt: skip
    record.add_call(bash(3, "go test ./...", GO_ERROR.replace(":12:2", ":14:2"), True))
    record.add_call(bash(4, "go vet ./...", "vet: ok\n", False))
    record.add_call(bash(5, "go test ./...", GO_ERROR.replace(":12:2", ":15:3"), True))
    record.add_verdict(
        3, "check-every: 20 calls since the last check", Verdict(False, 0.2, "fine"), None
    )
    clock.now += 252
    return record, clock


def test_summary_has_every_documented_part():
    record, _ = go_turn()
    summary = build_summary(record, [REPEAT])
    assert '"""\nmake the integration tests pass\n"""' in summary
    assert "repeat: 3× Bash: <path>/db_test.go:N: undefined: testDB" in summary  # what fired
    assert "6 tool calls, 3 failed, 4m12s, 2,700 input / 170 output tokens." in summary
    assert "Calls per tool: Bash 4, Read 1, Edit 1." in summary
    assert "Files touched: 2: db/db_test.go, db/db.go." in summary
    assert "- after 0 calls: I'll run the tests first." in summary
    assert "- after 2 calls: testDB is missing; I'll add it." in summary
    assert "check-every: 20 calls since the last check: not stuck (0.20): fine" in summary
    assert (
        "#6 Bash go test ./...\n    → failed (exit 1): ./db_test.go:15:3: undefined: testDB"
        in summary
    )
    assert "#3 Edit" in summary and "changed db/db.go" in summary
    assert "- 3× Bash: <path>/db_test.go:N: undefined: testDB" in summary
    assert "first at call 1, last at call 6:" in summary
    assert "    | ./db_test.go:12:2: undefined: testDB" in summary  # one raw example
    assert "- 3× Bash go test ./..." in summary  # repeated with the same arguments
    assert "## Files edited (1)\ndb/db.go (1×)" in summary


def test_previous_request_and_answer_appear_only_for_a_short_follow_up():
    previous = {
        "previous_request": "refactor the storage layer into its own package",
        "previous_answer": "I moved db.go into storage/ and updated the imports.",
    }
    follow_up, _ = record_of("continue", **previous)
    summary = build_summary(follow_up)
    assert "refactor the storage layer into its own package" in summary
    assert "I moved db.go into storage/" in summary

    fresh, _ = record_of("now add an index on users.email and a migration for it", **previous)
    assert "refactor the storage layer" not in build_summary(fresh)


@pytest.mark.parametrize(
    ("task", "short"),
    [
        ("continue", True),
        ("go on", True),
        ("yes", True),
        ("Continue, and also keep the old API working for the CLI callers", True),
        ("add retries with backoff to the HTTP client and cover them with tests", False),
    ],
)
def test_short_follow_ups_are_recognised(task: str, short: bool):
    assert is_short_follow_up(task) is short


def test_only_the_last_12_calls_are_listed():
    record, _ = record_of()
    for i in range(30):
        record.add_call(bash(i, f"echo step-{i}", f"step-{i}", False))
    summary = build_summary(record)
    assert "## The last 12 calls, oldest first" in summary
    assert "echo step-18" in summary and "echo step-29" in summary
    assert "echo step-17" not in summary


def test_summary_stays_bounded_however_long_the_turn():
    record, clock = record_of(task="x" * 20_000)
    for i in range(2_000):
        long_line = f"Error {i}: " + "detail " * 400
        record.add_call(
            bash(i, f"./run --case {i} " + "-v " * 500, long_line, i % 2 == 0,
                 files_changed=(f"src/file_{i}.py",))
        )  # fmt: skip
        record.add_response(
            Message(role="assistant", content="thinking aloud " * 300),
            Usage(input_tokens=10, output_tokens=10),
        )
        record.add_verdict(i, f"check-every: {i}", Verdict(False, 0.1, "r" * 2000), None)
        clock.now += 3
    summary = build_summary(record, [REPEAT])
    assert len(summary) < 16_000
    assert "(1995 earlier checks not shown)" in summary
    assert "2000 tool calls, 1000 failed, 1h40m" in summary


def test_the_record_keeps_only_what_the_summary_shows():
    record, _ = record_of()
    for i in range(2_000):
        record.add_call(bash(i, f"cmd {i}", f"KeyError: 'k{i}'", True))
    assert len(record.failure_examples) <= 3
    assert len(record.call_labels) <= 5
    assert len(record.last_calls) == 12


SECRETS = [
    "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz012345",
    "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx",
    "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv",
    "AKIAIOSFODNN7EXAMPLE",
    "xoxb-123456789012-abcdefghijkl",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
]


@pytest.mark.parametrize("secret", SECRETS)
def test_planted_keys_never_reach_the_summary(secret: str):
    record, _ = record_of(task=f"use the key {secret} to call the API")
    record.add_call(bash(0, f"curl -H 'x-api-key: {secret}' https://api.example.com", secret, True))
    record.add_response(Message(role="assistant", content=f"The key is {secret}."), Usage())
    summary = build_summary(record)
    assert secret not in summary
    assert secret[:12] not in summary
    assert "[redacted]" in summary


@pytest.mark.parametrize(
    ("line", "kept"),
    [
        ("export GITHUB_TOKEN=abc123plain", "export GITHUB_TOKEN="),
        ("DB_PASSWORD: hunter2", "DB_PASSWORD: "),
        ('api_key="pa55word!"', "api_key="),
        ('{"apiKey": "s3cr3t-value"}', '{"apiKey": '),
        ("Authorization: Bearer abc.def.ghi-jkl", "Authorization: "),
        ("curl -H 'Authorization: token deadbeefcafe'", "Authorization: "),
        ("postgres://admin:letmein@db.internal/app", "postgres://admin:"),
    ],
)
def test_env_like_values_and_auth_headers_are_redacted(line: str, kept: str):
    redacted = redact(line)
    assert kept in redacted
    assert "[redacted]" in redacted
    for secret in (
        "abc123plain",
        "hunter2",
        "pa55word",
        "s3cr3t",
        "abc.def",
        "deadbeef",
        "letmein",
    ):
        assert secret not in redacted


@pytest.mark.parametrize(
    "text",
    [
        "tokenize.TokenError: ('EOF in multi-line statement', (3, 0))",
        "max_tokens=1024",
        "PasswordField(required=True)",
        "test_secret_rotation PASSED",
    ],
)
def test_redaction_leaves_ordinary_code_and_errors_alone(text: str):
    assert redact(text) == text


def test_one_call_is_counted_in_the_singular():
    record, _ = record_of()
    record.add_call(bash(0, "go test ./...", GO_ERROR, True))

    assert "1 tool call, 1 failed," in build_summary(record)
