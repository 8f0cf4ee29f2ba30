"""Scripted scenarios for the loop guard: where it asks its judge, and where it stops.

    .venv/bin/python benchmarks/guard_scenarios.py

Each scenario is a short, made-up turn of one kind (a loop, or productive work
that looks like one) played through the real `LoopGuard` in active mode three
times: with a judge that always says "stuck", with one that always says "not
stuck", and with a judge that never answers (timeouts). The table says after
how many calls the guard first asks, and after how many it would end the turn
(a note first, then the stop) with each judge. `benchmarks/corpus_eval.py`
prints the same table next to the corpus figures.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TASK = "make the test suite pass"


@dataclass(frozen=True)
class Scenario:
    name: str
    kind: str  # "stuck" or "productive": what a good guard does with it
    steps: list[tuple[str, dict[str, Any], str, bool | None]] = field(default_factory=list)
    text: str = ""  # a streamed answer (the text loop), fed in small pieces
    task: str = TASK
    files_changed: dict[int, tuple[str, ...]] = field(default_factory=dict)


def _pytest_failure(test: str, error: str, failed: int = 1) -> str:
    more = f", {failed - 1} more failed" if failed > 1 else ""
    return (
        "============================= test session starts ==============================\n"
        f"tests/test_db.py F\n\n_______ {test} _______\n"
        f"E   {error}\n"
        f"FAILED tests/test_db.py::{test} - {error}\n"
        f"========================= {failed} failed{more} in 0.{failed}2s ========================="
    )


def stuck_identical() -> Scenario:
    out = _pytest_failure("test_connect", "KeyError: 'DATABASE_URL'")
    steps = [("bash", {"command": "pytest tests/test_db.py"}, out, True)] * 30
    return Scenario("stuck: the same failing call", "stuck", steps)


def stuck_varied() -> Scenario:
    commands = [
        "pytest tests/test_db.py",
        "python -m pytest tests/test_db.py -x",
        "pytest -q tests/test_db.py::test_connect",
    ]
    steps = []
    for n in range(30):
        error = "KeyError: 'DATABASE_URL'"
        out = _pytest_failure("test_connect", error).replace("0.12s", f"0.{n + 10}s")
        steps.append(("bash", {"command": commands[n % 3]}, out, True))
    return Scenario("stuck: one failure through rotating commands", "stuck", steps)


def productive_distinct() -> Scenario:
    steps = [
        ("read", {"path": f"src/module_{n}.py"}, f"def handler_{n}():\n    return {n}\n", False)
        for n in range(60)
    ]
    return Scenario("productive: 60 distinct reads", "productive", steps)


def polling() -> Scenario:
    steps = [("bash", {"command": "./deploy-status.sh"}, "status: pending\n", False)] * 25
    steps.append(("bash", {"command": "./deploy-status.sh"}, "status: done\n", False))
    return Scenario("productive: a poll that finishes (25× pending)", "productive", steps,
                    task="deploy the service and wait until it is up")  # fmt: skip


def polling_with_sleep() -> Scenario:
    steps = []
    for n in range(30):
        steps.append(("bash", {"command": "sleep 10"}, "", False))
        status = "status: pending\n" if n < 29 else "status: done\n"
        steps.append(("bash", {"command": "./deploy-status.sh"}, status, False))
    return Scenario("productive: sleep and poll, 30 rounds", "productive", steps,
                    task="deploy the service and wait until it is up")  # fmt: skip


def converging_test_cycle() -> Scenario:
    """Run the tests, fix one failure, re-run: each round one failure fewer."""
    tests = [f"test_case_{n}" for n in range(8)]
    steps: list[tuple[str, dict[str, Any], str, bool]] = []
    changed: dict[int, tuple[str, ...]] = {}
    for remaining in range(len(tests), 0, -1):
        test = tests[len(tests) - remaining]
        out = _pytest_failure(test, f"AssertionError: {test} expected 1", failed=remaining)
        steps.append(("bash", {"command": "pytest tests/"}, out, True))
        steps.append(("read", {"path": "src/app.py"}, f"# source, round {remaining}\n", False))
        changed[len(steps)] = ("src/app.py",)
        steps.append(("edit", {"path": "src/app.py", "old": f"v{remaining}", "new": f"w{remaining}"},
                      "edited src/app.py", False))  # fmt: skip
    steps.append(("bash", {"command": "pytest tests/"}, "8 passed in 0.40s", False))
    return Scenario("productive: test, fix, re-test until green (8 rounds)", "productive",
                    steps, files_changed=changed)  # fmt: skip


def slow_cycle() -> Scenario:
    """Rounds of different commands (re-run, view, edit, re-run otherwise), each
    ending in one underlying failure that every command shows its own way."""
    error = "KeyError: 'DATABASE_URL'"
    steps: list[tuple[str, dict[str, Any], str, bool]] = []
    changed: dict[int, tuple[str, ...]] = {}
    runs = [
        ("pytest tests/test_db.py", _pytest_failure("test_connect", error)),
        ("python reproduce.py", f'Traceback (most recent call last):\n  File "reproduce.py", '
                                f'line 3, in <module>\n    connect()\n{error}\n'),
        ("pytest -q --tb=no tests/test_db.py",
         f"FAILED tests/test_db.py::test_connect - {error}\n1 failed in 0.05s\n"),
    ]  # fmt: skip
    for n in range(8):
        command, out = runs[n % 3]
        steps.append(("bash", {"command": command}, out, True))
        steps.append(("read", {"path": "src/db.py"}, "def connect():\n    url = ENV[KEY]\n", False))
        changed[len(steps)] = ("src/db.py",)
        steps.append(("edit", {"path": "src/db.py", "old": f"try {n}", "new": f"try {n + 1}"},
                      "edited src/db.py", False))  # fmt: skip
    return Scenario("stuck: a slow cycle of different commands, one failure", "stuck", steps,
                    files_changed=changed)  # fmt: skip


def drift_fresh_names() -> Scenario:
    """Each round writes a new scratch script that reproduces the same thing."""
    steps: list[tuple[str, dict[str, Any], str, bool]] = [
        ("read", {"path": "src/db.py"}, "def connect():\n    url = ENV[KEY]\n", False),
    ]
    for n in range(1, 11):
        name = f"test_x{n}.py"
        steps.append(("write", {"path": name, "content": f"# try {n}\nfrom src.db import connect\n"},
                      f"wrote {name}", False))  # fmt: skip
        steps.append(("bash", {"command": f"python {name}"},
                      f"{name}: connect() returned None\n", False))  # fmt: skip
    return Scenario("stuck: drift, the same reproduction under fresh names", "stuck", steps)


def effort_without_change() -> Scenario:
    """Views, searches and listings of the same few places, in no fixed order."""
    places = [
        ("read", {"path": "src/db.py"}, "def connect():\n    url = ENV[KEY]\n"),
        ("grep", {"pattern": "DATABASE_URL"}, "src/db.py:2: KEY = 'DATABASE_URL'\n"),
        ("bash", {"command": "ls src"}, "db.py\napp.py\n"),
        ("read", {"path": "src/app.py"}, "from db import connect\n"),
        ("bash", {"command": "git status"}, "nothing to commit, working tree clean\n"),
    ]
    order = [0, 1, 2, 3, 4, 1, 0, 3, 2, 4, 0, 2, 1, 4, 3, 1, 2, 0, 4, 3, 2, 1, 3, 0, 4, 0, 1, 2]
    steps = [(places[i][0], places[i][1], places[i][2], False) for i in order]
    return Scenario("stuck: effort that changes nothing (the same 5 places, 28 calls)", "stuck",
                    steps)  # fmt: skip


def flat_successful_scripts() -> Scenario:
    """Varied scripts that all succeed and report, each in its own words and with
    what it was asked, that nothing matched."""
    tables = ["orders", "payouts", "ledger", "refunds", "invoices"]
    steps: list[tuple[str, dict[str, Any], str, bool]] = [
        ("read", {"path": "scripts/export_report.py"},
         "rows = db.orders(day=day, status='settled')\nwrite_csv(rows)\n", False),
    ]  # fmt: skip
    for n in range(21):
        table, day = tables[n % 5], f"2026-11-{28 - n:02d}"
        if n % 3 == 2:
            command = f"psql -c \"select count(*) from {table} where day = '{day}'\""
            out = " count \n-------\n     0\n(1 row)"
        else:
            command = f"python scripts/query.py --table {table} --day {day}"
            out = f"query ok: 0 rows matched in {table} (day={day}) in 0.{n + 10}s"
        steps.append(("bash", {"command": command}, out, False))
    return Scenario("stuck: varied scripts that all succeed and match 0 rows", "stuck", steps,
                    task="find out why the nightly report is empty")  # fmt: skip


def timeout_judged_fine_early() -> Scenario:
    """A run without exit statuses: the integration run is killed at its time limit
    and the agent tails the log, three times (judged early), then the same timeout
    comes back six more times between other calls."""
    killed = "[timed out after 120 s; the command and everything it started were killed]"
    run = ("bash", {"command": "./run_integration.sh"}, f"starting services...\n{killed}", None)
    tail = ("bash", {"command": "tail -3 logs/api.log"}, "api | waiting for db...\n", None)
    others = [
        ("bash", {"command": "docker compose ps"}, "db Up\napi Restarting (1)\n", False),
        ("bash", {"command": "grep -n timeout pytest.ini"}, "3:timeout = 600\n", False),
        ("bash", {"command": "head -3 docker-compose.yml"}, "services:\n  db:\n", False),
    ]
    steps: list[tuple[str, dict[str, Any], str, bool | None]] = [run, tail] * 3
    for other in others:
        steps += [other, run, tail, run]
    return Scenario("stuck: a timeout judged fine early keeps coming back", "stuck", steps,
                    task="run the integration tests and make them pass")  # fmt: skip


def text_loop() -> Scenario:
    paragraph = "I will check the configuration again to see why the test still fails. "
    return Scenario("stuck: an answer repeating one paragraph", "stuck", text=paragraph * 40)


SCENARIOS: list[Callable[[], Scenario]] = [
    stuck_identical,
    stuck_varied,
    slow_cycle,
    drift_fresh_names,
    effort_without_change,
    flat_successful_scripts,
    timeout_judged_fine_early,
    text_loop,
    productive_distinct,
    polling,
    polling_with_sleep,
    converging_test_cycle,
]


# ---------------------------------------------------------------- playing


class _Judge:
    def __init__(self, answer: str):
        self.answer = answer
        self.calls = 0

    def __call__(self, summary: str, timeout_s: float) -> Any:
        from caretz.guard.model import JudgeResult, Verdict

        self.calls += 1
        if self.answer == "none":
            return JudgeResult.no_verdict("scripted", 0.0, "timeout after 15s")
        stuck = self.answer == "stuck"
        return JudgeResult(
            verdict=Verdict(stuck, 0.9 if stuck else 0.2, "scripted"),
            model="scripted",
            latency_s=0.0,
        )


@dataclass
class Outcome:
    first_ask: int | None = None  # calls (1-based) when the judge was first asked
    redirect: int | None = None
    stop: int | None = None
    judge_calls: int = 0
    unit: str = "calls"


def play(scenario: Scenario, answer: str, config: Any = None) -> Outcome:
    """Play `scenario` through an active guard whose judge always gives `answer`
    ("stuck", "not stuck" or "none")."""
    from caretz.guard.config import LoopGuardConfig
    from caretz.guard.guard import LoopGuard
    from caretz.guard.model import ToolObservation, TurnContext
    from caretz.guard.seam import Cut, Redirect, Stop
    from caretz.messages import ToolCall
    from caretz.session.records.guard import LoopGuardJudging

    outcome = Outcome()
    judge = _Judge(answer)
    position = [0]

    def emit(record: object) -> None:
        if isinstance(record, LoopGuardJudging) and outcome.first_ask is None:
            outcome.first_ask = position[0]

    config = config or LoopGuardConfig(mode="active")
    guard = LoopGuard(config, judge, emit)
    guard.begin_turn(TurnContext(task=scenario.task, model_ref="test/model"))
    if scenario.text:
        outcome.unit = "repeats"
        paragraph = scenario.text[: scenario.text.index(". ") + 2]
        streamed = ""
        for start in range(0, len(scenario.text), 7):
            piece = scenario.text[start : start + 7]
            streamed += piece
            position[0] = streamed.count(paragraph)
            decision = guard.on_text(piece)
            if isinstance(decision, Cut):
                outcome.redirect = position[0]
                break
        outcome.judge_calls = judge.calls
        return outcome
    for index, (tool, args, output, failed) in enumerate(scenario.steps):
        position[0] = index + 1
        guard.before_tool(ToolCall(id=f"c{index}", name=tool, arguments=args))
        obs = ToolObservation(
            index=index, tool=tool, args=args, output=output, failed=failed, exit_code=1 if failed else 0,
            files_changed=scenario.files_changed.get(index, ()),
        )  # fmt: skip
        decision = guard.after_tool(obs)
        if isinstance(decision, Redirect) and outcome.redirect is None:
            outcome.redirect = index + 1
        if isinstance(decision, Stop):
            outcome.stop = index + 1
            break
    outcome.judge_calls = judge.calls
    return outcome


def _cell(outcome: Outcome) -> str:
    if outcome.stop is None and outcome.redirect is None:
        return "never"
    if outcome.unit == "repeats":
        return f"cut after {outcome.redirect} repeats"
    note = f"note @{outcome.redirect}, " if outcome.redirect is not None else ""
    stop = f"stop @{outcome.stop}" if outcome.stop is not None else "no stop"
    return note + stop


def scenario_table(config: Any = None) -> str:
    header = [
        "scenario",
        "calls",
        "first ask",
        "judge says stuck",
        "judge says not stuck",
        "judge calls (not stuck)",
        "no judge answers",
        "first ask without rounds and no-progress",
        "first ask without the stagnation signal",
    ]
    lines = [_row(header), _row(["---"] * len(header))]
    for make in SCENARIOS:
        scenario = make()
        stuck = play(scenario, "stuck", config)
        fine = play(scenario, "not stuck", config)
        none = play(scenario, "none", config)
        before = play(scenario, "not stuck", _without_progress_checks(config)).first_ask
        steady = play(scenario, "not stuck", _without_stagnation(config)).first_ask
        calls = str(len(scenario.steps)) if scenario.steps else "(text)"
        first = fine.first_ask
        lines.append(
            _row(
                [
                    scenario.name,
                    calls,
                    "never" if first is None else f"@{first}",
                    _cell(stuck),
                    _cell(fine),
                    str(fine.judge_calls),
                    _cell(none),
                    "never" if before is None else f"@{before}",
                    "never" if steady is None else f"@{steady}",
                ]
            )
        )
    return "\n".join(lines)


def _without_progress_checks(config: Any) -> Any:
    from caretz.guard.config import LoopGuardConfig

    config = config or LoopGuardConfig(mode="active")
    detectors = config.detectors.model_copy(
        update={
            "rounds": config.detectors.rounds.model_copy(update={"enabled": False}),
            "no_progress": config.detectors.no_progress.model_copy(update={"enabled": False}),
        }
    )
    return config.model_copy(update={"detectors": detectors})


def _without_stagnation(config: Any) -> Any:
    from caretz.guard.config import LoopGuardConfig

    config = config or LoopGuardConfig(mode="active")
    return config.model_copy(
        update={"stagnation": config.stagnation.model_copy(update={"enabled": False})}
    )


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def main() -> int:
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    print(scenario_table())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
