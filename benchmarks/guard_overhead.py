"""How much the loop guard's cheap checks cost per tool result, early and late in a turn.

Runs every trigger and every enabled peer detector with NoJudge (no model is
called, every check answers "not stuck") on realistic mixed tool output: Go and
pytest failures, tracebacks, file listings, reads, edits and greps, with line
numbers, temp paths and timings that change from call to call. It prints the
microseconds per tool result at 10, 1,000 and 10,000 calls into one turn, and
the ratio of the last to the first, which must stay near 1: the per-result work
may not grow with the length of the turn.

    python -m benchmarks.guard_overhead          (from the repository root)
"""

from __future__ import annotations

import gc
import random
import sys
import time
from pathlib import Path
from typing import Any

POSITIONS = (10, 1_000, 10_000)
# Each position is timed (in CPU time) over WINDOWS back-to-back windows of WINDOW
# results and the fastest window counts, the least disturbed by other work. A window
# spans whole cycles of the output mix (7 kinds) and of the periodic check (20 calls).
WINDOW = 140
WINDOWS = 3
FLAT_RATIO = 1.5  # above this the checks are not flat


def _go_failure(rng: random.Random, i: int) -> str:
    line = rng.randint(10, 90)
    return (
        "# example.com/app/db [example.com/app/db.test]\n"
        f"/tmp/go-build{rng.randint(1000, 99999)}/b001/db_test.go:{line}:{rng.randint(1, 9)}: "
        "undefined: testDB\n"
        "FAIL\texample.com/app/db [build failed]\n"
        f"ok  \texample.com/app/api\t{rng.random():.3f}s\n"
        "FAIL\n"
    )


def _pytest_failure(rng: random.Random, i: int) -> str:
    test = rng.choice(["test_connect", "test_close", "test_retry", "test_timeout"])
    frames = "".join(
        f'  File "/home/dev/app/src/app/mod{n}.py", line {rng.randint(1, 400)}, in f{n}\n'
        f"    value = helper_{n}(payload)\n"
        for n in range(6)
    )
    return (
        "============================= test session starts ==============================\n"
        f"rootdir: /tmp/pytest-of-dev/pytest-{rng.randint(1, 99)}/app0\n"
        "collected 48 items\n\n"
        "tests/test_db.py ....F......................................... [100%]\n\n"
        "=================================== FAILURES ===================================\n"
        f"Traceback (most recent call last):\n{frames}"
        f"E       AssertionError: assert {rng.randint(0, 3)} == 1\n\n"
        f"tests/test_db.py:{rng.randint(10, 200)}: AssertionError\n"
        f"FAILED tests/test_db.py::{test} - AssertionError\n"
        f"========================= 1 failed, 47 passed in {rng.random() * 3:.2f}s ===\n"
    )


def _traceback(rng: random.Random, i: int) -> str:
    error = rng.choice(
        [
            "KeyError: 'user_id'",
            "TypeError: unsupported operand type(s) for +: 'int' and 'str'",
            f"ValueError: invalid literal for int() with base 10: 'x{i % 50}'",
        ]
    )
    return (
        "Traceback (most recent call last):\n"
        f'  File "/home/dev/app/run.py", line {rng.randint(1, 80)}, in <module>\n'
        "    main()\n"
        f"{error}\n"
    )


def _listing(rng: random.Random, i: int) -> str:
    return "\n".join(f"src/app/module_{n}_{i % 13}.py" for n in range(rng.randint(20, 60)))


def _read(rng: random.Random, i: int) -> str:
    return "\n".join(
        f"{n + 1}: def function_{n}(arg):  # {rng.randint(0, 10**6)}" for n in range(80)
    )


def _grep(rng: random.Random, i: int) -> str:
    return "\n".join(
        f"src/app/mod{n}.py:{rng.randint(1, 500)}: connect(timeout={rng.randint(1, 30)})"
        for n in range(15)
    )


# (tool, args, output maker, failed)
_KINDS: list[tuple[str, Any, Any, bool]] = [
    ("bash", lambda i: {"command": "go test ./..."}, _go_failure, True),
    ("read", lambda i: {"path": f"src/app/mod{i % 40}.py"}, _read, False),
    ("bash", lambda i: {"command": "pytest -x tests/test_db.py"}, _pytest_failure, True),
    ("grep", lambda i: {"pattern": "connect(", "path": "src"}, _grep, False),
    ("edit", lambda i: {"path": f"src/app/mod{i % 40}.py", "old": "a", "new": f"b{i}"},
     lambda rng, i: "Edited 1 place.", False),
    ("bash", lambda i: {"command": f"python run.py --case {i % 9}"}, _traceback, True),
    ("bash", lambda i: {"command": "ls -R src"}, _listing, False),
]  # fmt: skip


def _observation(rng: random.Random, i: int) -> tuple[Any, Any]:
    from caretz.guard.model import ToolObservation
    from caretz.messages import ToolCall

    tool, args_of, output_of, failed = _KINDS[i % len(_KINDS)]
    args = args_of(i)
    changed = (args["path"],) if tool == "edit" else ()
    call = ToolCall(id=f"call_{i}", name=tool, arguments=args)
    obs = ToolObservation(
        index=i,
        tool=tool,
        args=args,
        output=output_of(rng, i),
        failed=failed,
        exit_code=1 if failed else 0,
        duration_s=0.5,
        files_changed=changed,
    )
    return call, obs


def _guard() -> Any:
    from caretz.guard.config import LoopGuardConfig
    from caretz.guard.guard import LoopGuard
    from caretz.guard.judge import NoJudge
    from caretz.guard.model import TurnContext

    # Shadow mode keeps every check running however long the turn; the tool budget
    # is off so that a turn can reach 10,000 calls at all.
    config = LoopGuardConfig(mode="shadow", detectors={"tool_budget": {"warn_at": 0, "stop_at": 0}})
    guard = LoopGuard(config, NoJudge(), lambda type, **fields: fields)
    guard.begin_turn(TurnContext(task="make the integration tests pass", model_ref="bench/model"))
    return guard


def _feed(guard: Any, items: list[tuple[Any, Any]]) -> None:
    from caretz.messages import Message, Usage

    usage = Usage(input_tokens=2000, output_tokens=150)
    for call, obs in items:
        guard.after_response(Message(role="assistant", content="", tool_calls=[call]), usage)
        guard.before_tool(call)
        guard.after_tool(obs)


def microseconds_per_result(position: int) -> float:
    """Time tool results right after `position` untimed ones in the same turn."""
    rng = random.Random(position)
    guard = _guard()
    _feed(guard, [_observation(rng, i) for i in range(position)])
    fastest = float("inf")
    for window in range(WINDOWS):
        first = position + window * WINDOW
        # The same outputs at every position, so that only the position differs.
        same = random.Random(window)
        items = [_observation(same, i) for i in range(first, first + WINDOW)]
        gc.collect()
        started = time.process_time()  # CPU time: other processes do not count
        _feed(guard, items)
        fastest = min(fastest, time.process_time() - started)
    return fastest / WINDOW * 1e6


def main() -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    results = {position: microseconds_per_result(position) for position in POSITIONS}
    print("loop guard: cheap checks per tool result (triggers + enabled detectors, NoJudge)")
    print(f"{'calls into the turn':>20}  {'µs per tool result':>18}")
    for position, micros in results.items():
        print(f"{position:>20,}  {micros:>18.1f}")
    ratio = results[POSITIONS[-1]] / results[POSITIONS[0]]
    verdict = "flat" if ratio <= FLAT_RATIO else "NOT flat: the checks grow with the turn"
    print(f"ratio {POSITIONS[-1]:,} vs {POSITIONS[0]:,}: {ratio:.2f} ({verdict})")
    return 0 if ratio <= FLAT_RATIO else 1


if __name__ == "__main__":
    raise SystemExit(main())
