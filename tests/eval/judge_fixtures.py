"""A small labelled corpus and a scripted judge for `caretz guard eval`, built for the tests.

Four trajectories alternate a failing run with a successful edit, so the only
check that fires is the repeat trigger, at the 3rd, 6th and 9th failure: steps
4, 10 and 16. The judge (a responder of the loopback model server) answers by
trajectory and step, so every cell of the evaluation is known in advance:

| trajectory | label                               | @4              | @10           | @16         |
|------------|-------------------------------------|-----------------|---------------|-------------|
| loop-a     | same-failure-repeat, from 8         | not stuck (TN)  | stuck (TP)    | stuck (TP)  |
| loop-b     | identical-call-repeat, 4 to 8       | not stuck (FN)  | stuck 0.4 (FP, below minConfidence) |
| prod       | productive                          | stuck 0.7 (FP)  | unreadable (TN, no answer)    |
| low        | productive, low confidence          | stuck (not scored)                |

Each call's latency (for an injected clock) and tokens grow with its number:
call k (1 to 8, in the order above) takes k seconds, k×1000 input and k×10
output tokens.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.modelserver import RecordedRequest, Reply, text

TASKS = {
    "loop-a": "TASK loop-a: make run.py start",
    "loop-b": "TASK loop-b: fix the config loader",
    "prod": "TASK prod: port the parser",
    "low": "TASK low: tidy the tests",
}
LABELS = {
    "loop-a": {"stuck": True, "first_stuck_step": 8, "kind": "same-failure-repeat"},
    "loop-b": {
        "stuck": True,
        "first_stuck_step": 4,
        "stuck_until": 8,
        "kind": "identical-call-repeat",
    },
    "prod": {"stuck": False, "kind": "productive"},
    "low": {"stuck": False, "kind": "productive", "confidence": "low"},
}
STEPS = {"loop-a": 18, "loop-b": 12, "prod": 12, "low": 6}
ERRORS = {
    "loop-a": "ModuleNotFoundError: No module named 'yaml'",
    "loop-b": "KeyError: 'database'",
    "prod": "TypeError: unsupported operand",
    "low": "AssertionError: 3 != 4",
}
# (trajectory, step) → the judge's reply text, and the call's number (its latency, tokens).
ANSWERS: dict[tuple[str, int], tuple[str, int]] = {}


def _verdict(stuck: bool, confidence: float, reason: str) -> str:
    return json.dumps(
        {"stuck": stuck, "confidence": confidence, "reason": reason, "try_instead": ""}
    )


for number, (key, reply) in enumerate(
    [
        (("loop-a", 4), _verdict(False, 0.2, "loop-a: each run follows an edit")),
        (("loop-a", 10), _verdict(True, 0.9, "loop-a: yaml is still missing")),
        (("loop-a", 16), _verdict(True, 0.9, "loop-a: the same import fails again")),
        (("loop-b", 4), _verdict(False, 0.3, "loop-b: the edits look different")),
        (("loop-b", 10), _verdict(True, 0.4, "loop-b: maybe the same KeyError")),
        (("prod", 4), _verdict(True, 0.7, "prod: TypeError three times")),
        (("prod", 10), "I think it is fine."),
        (("low", 4), _verdict(True, 0.9, "low: the assertion keeps failing")),
    ],
    start=1,
):
    ANSWERS[key] = (reply, number)

CALLS = len(ANSWERS)
PRICE_IN, PRICE_OUT = 3.0, 15.0  # anthropic/claude-sonnet-*, USD per million tokens


def steps(trajectory: str) -> list[dict[str, Any]]:
    recorded = []
    for i in range(STEPS[trajectory]):
        if i % 2 == 0:
            output = (
                "Traceback (most recent call last):\n"
                f'  File "/tmp/w{i}/run.py", line {i + 3}\n{ERRORS[trajectory]}\n'
            )
            recorded.append(
                {
                    "tool": "bash",
                    "args": {"command": f"python run.py --try {i}"},
                    "output": output,
                    "failed": True,
                }
            )
        else:
            recorded.append(
                {
                    "tool": "edit",
                    "args": {"path": "app.py", "new": f"fix {i}"},
                    "output": f"edited app.py ({i} lines changed)",
                    "failed": False,
                }
            )
    return recorded


def write_corpus(path: Path, names: list[str] | None = None) -> Path:
    names = names or list(TASKS)
    lines = [
        json.dumps({"id": n, "task": TASKS[n], "steps": steps(n), "label": LABELS[n]})
        for n in names
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def asked_about(request: RecordedRequest) -> tuple[str, int]:
    """Which trajectory and step a judge request is about, read from its summary."""
    summary = request.messages[0]["content"]
    if isinstance(summary, list):
        summary = " ".join(block.get("text", "") for block in summary)
    trajectory = re.search(r"TASK (\S+):", summary)
    calls = re.search(r"(\d+) tool calls, ", summary)
    assert trajectory and calls, f"not a judge summary: {summary[:200]}"
    return trajectory.group(1), int(calls.group(1)) - 1


class ScriptedJudgeServer:
    """The server-side judge: answers from ANSWERS, advances `clock` by the call's
    latency, counts the requests in flight, and can hold a request until released."""

    def __init__(self, clock: Callable[[float], None] | None = None):
        self.clock = clock
        self.lock = threading.Lock()
        self.in_flight = 0
        self.most_in_flight = 0
        self.asked: list[tuple[str, int]] = []
        self.barrier: threading.Barrier | None = None  # the first `parties` requests meet
        self.hold_at: int | None = None  # hold the request with this number (1-based)
        self.holding = threading.Event()
        self.release = threading.Event()

    def __call__(self, request: RecordedRequest) -> Reply:
        key = asked_about(request)
        with self.lock:
            self.asked.append(key)
            number = len(self.asked)
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            if self.barrier is not None and number <= self.barrier.parties:
                self.barrier.wait()
            if number == self.hold_at:
                self.holding.set()
                self.release.wait(60)
            reply, k = ANSWERS[key]
            if self.clock is not None:
                self.clock(float(k))
            return text(reply, usage=(k * 1000, k * 10, 0))
        finally:
            with self.lock:
                self.in_flight -= 1
