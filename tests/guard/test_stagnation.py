"""The stagnation signal: while the run looks flat, the periodic check comes sooner."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from caretz.guard.config import LoopGuardConfig
from caretz.guard.guard import LoopGuard
from caretz.guard.model import ToolObservation, TurnContext
from caretz.guard.seam import Redirect
from caretz.guard.stagnation import Stagnation, error_class
from caretz.messages import Message, ToolCall
from tests.guard.test_guard import STUCK, Clock, Events
from tests.scripted import ScriptedJudge

TASK = "find out why the nightly settlement report is empty"

# Each query succeeds and says, in its own words and with what it was asked, that
# nothing matched: no output is ever the same, none carries anything new.
QUERIES = [
    ("python scripts/query.py --table orders --status settled",
     "query ok: 0 rows matched in orders (status=settled) in 0.21s"),
    ("python scripts/query.py --table payouts --since 2026-11-28",
     "query ok: 0 rows matched in payouts (since=2026-11-28) in 0.19s"),
    ("psql -c \"select count(*) from ledger where kind = 'settlement'\"",
     " count \n-------\n     0\n(1 row)"),
    ("python scripts/query.py --table orders --status paid --day 2026-11-30",
     "query ok: 0 rows matched in orders (status=paid, day=2026-11-30) in 0.2s"),
    ("python scripts/reconcile.py --since 2026-11-01",
     "reconcile: 0 rows matched since 2026-11-01; nothing to do"),
    ("psql -c \"select count(*) from orders where day >= '2026-11-28'\"",
     " count \n-------\n     0\n(1 row)"),
    ("python scripts/query.py --table refunds --status settled",
     "query ok: 0 rows matched in refunds (status=settled) in 0.3s"),
    ("python scripts/reconcile.py --since 2026-10-01 --table payouts",
     "reconcile: 0 rows matched since 2026-10-01 in payouts; nothing to do"),
    ("python scripts/query.py --table ledger --kind settlement --day 2026-11-29",
     "query ok: 0 rows matched in ledger (kind=settlement, day=2026-11-29) in 0.2s"),
    ("psql -c \"select count(*) from payouts where status = 'settled'\"",
     " count \n-------\n     0\n(1 row)"),
    ("python scripts/query.py --table orders --day 2026-11-27",
     "query ok: 0 rows matched in orders (day=2026-11-27) in 0.2s"),
    ("python scripts/reconcile.py --since 2026-09-01 --table ledger",
     "reconcile: 0 rows matched since 2026-09-01 in ledger; nothing to do"),
    ("psql -c \"select count(*) from refunds where day = '2026-11-27'\"",
     " count \n-------\n     0\n(1 row)"),
    ("python scripts/query.py --table payouts --status pending",
     "query ok: 0 rows matched in payouts (status=pending) in 0.2s"),
]  # fmt: skip


def guard_with(judge: ScriptedJudge, **settings) -> tuple[LoopGuard, Events]:
    events = Events()
    guard = LoopGuard(LoopGuardConfig(mode="active", **settings), judge, events.emit,
                      clock=Clock())  # fmt: skip
    guard.begin_turn(TurnContext(task=TASK, model_ref="test/model"))
    return guard, events


def bash(index: int, command: str, output: str, failed: bool | None = False) -> ToolObservation:
    return ToolObservation(
        index=index,
        tool="bash",
        args={"command": command},
        output=output,
        failed=failed,
        exit_code=1 if failed else 0,
    )


def play(guard: LoopGuard, observations: list[ToolObservation]) -> list[object]:
    decisions = []
    for obs in observations:
        guard.before_tool(ToolCall(id=f"c{obs.index}", name=obs.tool, arguments=obs.args))
        decisions.append(guard.after_tool(obs))
    return decisions


def flat_run() -> list[ToolObservation]:
    first = ToolObservation(index=0, tool="read", args={"path": "scripts/export_report.py"},
                            output="rows = db.orders(day=day, status='settled')\nwrite_csv(rows)", failed=False)  # fmt: skip
    return [first] + [bash(n, command, out) for n, (command, out) in enumerate(QUERIES, 1)]


def test_a_flat_run_of_successful_varied_commands_is_checked_sooner_than_20_calls():
    judge = ScriptedJudge()
    guard, events = guard_with(judge)
    play(guard, flat_run())
    # The first calls' words are news (the script, "rows matched", psql's table); from
    # the 11th call on, the last ten brought next to nothing new.
    (judging,) = events.of("LoopGuard.Judging")
    assert judging["step"] + 1 == 11
    assert judging["trigger"] == "check-every"
    assert judging["headline"] == (
        "check-every: 11 calls since the last check (sooner: the run looks flat, "
        "3 of the last 10 calls returned anything new, none changed a task file)"
    )
    assert "## Why you are asked now\n- check-every: 11 calls" in judge.summaries[0]
    # Without the signal nothing fires on this run before the routine check at 20.
    quiet, quiet_events = guard_with(ScriptedJudge(), stagnation={"enabled": False})
    play(quiet, flat_run())
    assert quiet_events.of("LoopGuard.Judging") == []


def test_the_note_says_the_check_came_sooner_and_why():
    guard, _ = guard_with(ScriptedJudge(STUCK))
    decisions = play(guard, flat_run())
    note = decisions[10]
    assert isinstance(note, Redirect)
    assert (
        "A routine check, brought forward because the last 10 tool calls changed no task "
        "file and returned almost nothing new, found the turn going in circles" in note.note
    )


def test_a_run_that_moves_is_checked_at_20():
    # Reads of different files, each with something new, and now and then an edit.
    judge = ScriptedJudge()
    guard, events = guard_with(judge)
    observations = []
    for n in range(25):
        if n % 7 == 6:
            observations.append(ToolObservation(index=n, tool="edit", args={"path": f"src/m{n}.py", "new": "x"},
                                                output="edited", failed=False))  # fmt: skip
        else:
            text = f"def handler_{n}(request):\n    return route_{n}(request.user_{n})\n"
            observations.append(
                ToolObservation(
                    index=n, tool="read", args={"path": f"src/m{n}.py"}, output=text, failed=False
                )
            )
    play(guard, observations)
    assert [(e["step"] + 1, e["headline"]) for e in events.of("LoopGuard.Judging")] == [
        (20, "check-every: 20 calls since the last check")
    ]


def signal_after(observations: list[ToolObservation], window: int = 10) -> Stagnation:
    signal = Stagnation(window)
    for obs in observations:
        signal.observe(obs)
    return signal


def test_one_error_class_through_different_commands_is_flat():
    refused = [
        ("psql -h db -c 'select 1'", 'psql: error: connection to server at "db" (10.0.0.5), '
         "port 5432 failed: Connection refused"),
        ("python -m app.migrate", "sqlalchemy.exc.OperationalError: could not connect to server"),
        ("curl -s db:5432", "curl: (7) Failed to connect to db port 5432 after 0 ms"),
        ("nc -zv db 5432", "nc: connect to db port 5432 (tcp) failed: Connection refused"),
        ("redis-cli -h cache ping", "Could not connect to Redis at cache:6379: Connection refused"),
    ]  # fmt: skip
    observations = [bash(n, *refused[n % len(refused)], failed=True) for n in range(10)]
    signal = signal_after(observations)
    assert signal.new_in_window() == 1 and signal.flat()
    timeouts = [bash(n, f"npm run build -- --shard {n}", f"compiled {1100 + n} modules\n"
                     "[timed out after 120 s; the command and everything it started were killed]",
                     failed=True) for n in range(10)]  # fmt: skip
    assert {error_class(obs, set()) for obs in timeouts} == {"timed out"}
    assert signal_after(timeouts).flat()
    # Different failures are news: a test run failing in a new way each time.
    errors = [bash(n, "pytest -q", f"E   AssertionError: case_{n} expected {n}", failed=True)
              for n in range(10)]  # fmt: skip
    assert not signal_after(errors).flat()


def test_a_poll_or_a_retry_is_not_flat_but_the_identical_call_checks_business():
    poll = [bash(n, "./deploy-status.sh", "status: pending") for n in range(12)]
    assert not signal_after(poll).flat()


def test_commands_that_change_files_or_the_machine_move_the_run_even_when_silent():
    setup = ["mkdir -p /var/www/site", "cp -r site/* /var/www/site/", "chown -R www:www /srv",
             "ln -s /etc/nginx/a /etc/nginx/b", "service nginx restart", "pip install -e .",
             "git add -A", "sed -i 's/80/8080/' nginx.conf", "cat > app.env <<EOF\nA=1\nEOF",
             "tar -xzf assets.tgz"]  # fmt: skip
    assert not signal_after([bash(n, command, "") for n, command in enumerate(setup)]).flat()
    # The same change made again changes nothing new.
    again = [bash(n, "sed -i 's/80/8080/' nginx.conf", "") for n in range(10)]
    assert not signal_after(again).flat()  # one call again and again: not flat either way
    lookups = [bash(n, f"grep -c port{n} nginx.conf", "0") for n in range(10)]
    assert signal_after(lookups).flat()


def test_a_message_or_plan_said_again_leaves_more_room_for_new_outputs():
    signal = Stagnation(10)
    said = Message(role="assistant", content="Let me check the orders table for yesterday again.")
    signal.observe_response(said)
    reads = [bash(n, f"cat notes_{n}.txt", f"note {n}: entry_{n}") if n in (1, 3, 5)
             else bash(n, f"grep -c x{n} notes.txt", "0") for n in range(10)]  # fmt: skip
    for obs in reads:
        signal.observe(obs)
    assert signal.new_in_window() == 4 and not signal.flat()
    signal.observe_response(said)  # the same words again
    assert signal.flat()
    # The same plan sent again with `todo` is the same words again.
    plan = {"todos": [{"content": "query the orders of yesterday", "status": "in_progress"}]}
    signal = Stagnation(10)
    for obs in [
        ToolObservation(index=0, tool="todo", args=plan, output="plan updated", failed=False),
        *reads[1:],
    ]:
        signal.observe(obs)
    assert not signal.flat()
    signal.observe(
        ToolObservation(index=10, tool="todo", args=plan, output="plan updated", failed=False)
    )
    assert signal.flat()


def test_the_key_is_documented_camel_case_and_checked():
    config = LoopGuardConfig.model_validate({"stagnation": {"enabled": False, "checkEvery": 6}})
    assert (config.stagnation.enabled, config.stagnation.check_every) == (False, 6)
    assert LoopGuardConfig().stagnation.enabled and LoopGuardConfig().stagnation.check_every == 10
    with pytest.raises(ValidationError, match="checkEvery"):
        LoopGuardConfig.model_validate({"stagnation": {"checkEvery": 0}})
