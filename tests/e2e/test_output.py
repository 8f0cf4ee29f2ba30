"""What a run prints: each thing once, unknowns as unknown, detail when asked for; the real CLI."""

from __future__ import annotations

import json

import pytest

from tests.e2e.test_loop_guard import GO_TEST, GO_TEST_SCRIPT, JUDGE, STUCK, verdict, with_judge
from tests.modelserver import Reply, calls, error, text, tool


def test_a_provider_error_is_printed_once(caretz, server):
    server.add(error(400, "max_tokens: must be at most 64000"))

    run = caretz("-p", "hi")

    assert run.code == 1
    assert run.stderr.count("max_tokens: must be at most 64000") == 1, run.stderr


def test_a_provider_error_is_printed_once_in_the_interactive_session(screen, server):
    server.add(error(400, "max_tokens: must be at most 64000"))
    term = screen()

    term.turn("hi", ends="error · ")

    assert term.text.count("max_tokens: must be at most 64000") == 1, term.text


def test_a_failed_run_of_a_model_without_a_price_has_an_unknown_cost(caretz, server):
    server.add(error(400, "bad request"))

    run = caretz("-p", "hi")

    assert run.code == 1
    assert "cost unknown" in run.stderr and "$0.0000" not in run.stderr
    server.add(error(400, "bad request"))
    as_json = caretz("-p", "hi", "--output", "json")
    lines = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert lines[-1]["type"] == "result" and lines[-1]["cost_usd"] is None
    assert lines[-2]["type"] == "Turn.Ended" and lines[-2]["cost_usd"] is None


def test_a_failed_run_of_a_priced_model_costs_nothing(caretz, server):
    caretz.write_config({"prices": {"anthropic/claude-test": {"input": 3, "output": 15}}})
    server.add(error(400, "bad request"))

    run = caretz("-p", "hi", "--output", "json")

    result = json.loads(run.stdout.splitlines()[-1])
    assert result["cost_usd"] == 0.0  # known: nothing was answered, nothing billed


def test_a_successful_run_of_a_model_without_a_price_says_so_too(caretz, server):
    server.add(tool("bash", command="true"), text("done"))

    run = caretz("-p", "hi")

    assert run.code == 0
    closing = run.stderr.strip().splitlines()[-1]
    assert "· 1 tool call ·" in closing and "cost unknown" in closing


OLD_BLOCK = "".join(f"    step_{n} = {n}\n" for n in range(10))
NEW_BLOCK = OLD_BLOCK.replace(" = ", " = 10 * ")


def edit_and_fail(workspace) -> list[Reply]:
    """A script that edits ten lines (a 24-line diff), then runs a command that prints ten
    lines and fails."""
    (workspace / "app.py").write_text("def steps():\n" + OLD_BLOCK)
    return [
        tool("read", path="app.py"),
        tool("edit", path="app.py", old_string=OLD_BLOCK, new_string=NEW_BLOCK),
        tool("bash", command="seq -f 'output line %g' 1 9; echo the real cause >&2; exit 3"),
        text("done"),
    ]


def test_the_default_view_shows_a_short_diff_and_the_failed_commands_last_lines(
    caretz, server, workspace
):
    server.add(*edit_and_fail(workspace))

    plain = caretz("-p", "change it")

    assert plain.code == 0, plain.stderr
    lines = plain.stderr.splitlines()
    assert "@@ -1,11 +1,11 @@" in lines and "-    step_0 = 0" in lines
    assert "-    step_9 = 9" not in lines  # cut after its first 12 lines, and said so
    assert "  … 12 more diff lines" in lines
    failed = next(n for n, line in enumerate(lines) if line.startswith("✗ bash seq"))
    assert lines[failed + 1 : failed + 5] == [
        "  │ … 7 earlier lines",
        "  │ output line 8",
        "  │ output line 9",
        "  │ the real cause",
    ]

    server.add(*edit_and_fail(workspace))
    detailed = caretz("-p", "change it", "--output", "detailed")

    assert detailed.code == 0, detailed.stderr
    assert "+    step_9 = 10 * 9" in detailed.stderr.splitlines()  # the whole diff
    assert "more diff lines" not in detailed.stderr
    assert "  │ the real cause" in detailed.stderr.splitlines()


def test_a_call_with_arguments_that_are_not_json_shows_what_was_sent(caretz, server):
    server.add(
        Reply(tool_calls=[("bash", {})], raw_arguments='{"command": "ls'),
        text("I will stop here."),
    )

    run = caretz("-p", "try things")

    assert run.code == 0, run.stderr
    assert '✗ bash {"command": "ls' in run.stderr and "✗ bash {}" not in run.stderr
    result = server.requests[1].messages[-1]["content"][0]["content"]
    assert result.count("not valid JSON") == 1 and "at at" not in result
    shown = caretz("sessions", "show", run.session_id)
    assert 'bash {"command": "ls' in shown.stdout


@pytest.mark.parametrize(("count", "words"), [(1, "1 tool call ·"), (2, "2 tool calls ·")])
def test_the_closing_line_counts_tool_calls_in_words_that_agree(caretz, server, count, words):
    server.add(calls(*[("bash", {"command": "true"})] * count), text("done"))

    run = caretz("-p", "go")

    assert words in run.stderr.strip().splitlines()[-1]


def test_sessions_show_prints_the_guard_notice_with_one_prefix(caretz, server, workspace):
    script = workspace / "gotest.sh"
    script.write_text(GO_TEST_SCRIPT)
    script.chmod(0o755)
    server.add(*[tool("bash", command=GO_TEST) for _ in range(6)], text("my report"))
    server.add(verdict(STUCK), verdict(STUCK), model=JUDGE)
    run = caretz("-p", "make the tests pass", *with_judge("active"))
    assert run.code == 3, run.stderr

    shown = caretz("sessions", "show", run.session_id)

    assert "[loop_guard] [loop-guard]" not in shown.stdout
    assert "[loop_guard] The turn was still stuck" in shown.stdout
    assert shown.stdout.count("The turn was still stuck") == 1  # once, not twice


def test_a_headless_stop_says_how_to_carry_on_instead_of_reply(caretz, server, workspace):
    script = workspace / "gotest.sh"
    script.write_text(GO_TEST_SCRIPT)
    script.chmod(0o755)
    server.add(*[tool("bash", command=GO_TEST) for _ in range(6)], text("my report"))
    server.add(verdict(STUCK), verdict(STUCK), model=JUDGE)

    run = caretz("-p", "make the tests pass", *with_judge("active"))

    assert run.code == 3, run.stderr
    assert "Reply to carry on" not in run.stderr
    [notice] = [line for line in run.stderr.splitlines() if "so the guard ended it" in line]
    assert notice.endswith('Carry on from there with: caretz --continue -p "…"')


def test_help_shows_the_guard_summary_whole_and_no_internal_type_names(caretz):
    main = caretz("--help")
    replay = caretz("guard", "replay", "--help")

    assert "recorded trajectories before trusting it." in " ".join(main.stdout.split())
    assert "caretz guard replay [OPTIONS] FILE...\n" in replay.stdout
    for internal in ("list[", "{FILE}", "<int range>"):
        assert internal not in replay.stdout
    assert "--detector NAME=on|off" in replay.stdout


def test_a_missing_replay_file_is_one_caretz_line(caretz, workspace):
    run = caretz("guard", "replay", str(workspace / "nowhere.jsonl"))

    assert run.code == 2
    assert run.stderr == f"caretz: {workspace / 'nowhere.jsonl'}: no such file\n"


def test_a_wide_table_cell_wraps_in_the_interactive_session(screen, server):
    token = "caretz/providers/" + "Q" * 150 + "_end.py"
    server.add(text(f"| file | what |\n|---|---|\n| {token} | the long one |\n\nThat is all."))
    term = screen()

    term.turn("list them")

    assert "…" not in term.text
    assert term.text.count("Q") == 150 and "_end.py" in "".join(term.text.split())


def test_the_other_clis_spellings_of_print_model_and_output_format_work(caretz, server):
    """`--print`, `-m` and `--output-format stream-json` (Claude Code's and Codex's words)
    run as `-p`, `--model` and `--output json`."""
    server.add(text("hello there"), model="other-model")

    done = caretz("--print", "hi", "-m", "anthropic/other-model", "--output-format", "stream-json")

    assert done.code == 0, done.stderr
    assert server.requests[0].model == "other-model"
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[-1]["type"] == "result" and lines[-1]["text"] == "hello there"
    assert any(line["type"] == "Turn.Ended" for line in lines[:-1])


def test_the_json_result_of_a_guarded_run_counts_the_judges_calls(caretz, server, workspace):
    """A harness reading `--output json` gets the whole run's tokens and cost, the loop
    guard's judge's in, with the judge's part shown apart."""
    script = workspace / "gotest.sh"
    script.write_text(GO_TEST_SCRIPT)
    script.chmod(0o755)
    prices = {"anthropic/claude-test": {"input": 3.0, "output": 15.0}}
    prices[f"anthropic/{JUDGE}"] = {"input": 1.0, "output": 5.0}
    caretz.write_config({"prices": prices})
    server.add(*[tool("bash", command=GO_TEST) for _ in range(6)], text("my report"))
    server.add(*[Reply(json.dumps(STUCK), usage=(1000, 50, 0)) for _ in range(2)], model=JUDGE)

    run = caretz("-p", "make the tests pass", "--output", "json", *with_judge("active"))

    assert run.code == 3, run.stderr
    result = json.loads(run.stdout.splitlines()[-1])
    assert result["type"] == "result" and result["status"] == "loop_guard"
    # Seven agent replies of 100 in / 20 out, two judge calls of 1000 in / 50 out.
    assert result["usage"]["judge"]["input_tokens"] == 2000
    assert result["usage"]["judge"]["output_tokens"] == 100
    assert result["usage"]["input_tokens"] == 700 + 2000
    assert result["usage"]["output_tokens"] == 140 + 100
    judge_cost = 2000 * 1e-6 + 100 * 5e-6
    assert result["judge_cost_usd"] == pytest.approx(judge_cost)
    assert result["cost_usd"] == pytest.approx(700 * 3e-6 + 140 * 15e-6 + judge_cost)
