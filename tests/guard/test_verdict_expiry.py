"""One rule for every held verdict (guard/holds.py): a pattern judged "not stuck" asks
again once it has doubled, or once a cap of calls has passed; a verdict holds only
what it was about."""

from __future__ import annotations

from caretz.guard.calls import IdenticalCallDetector
from caretz.guard.config import LoopGuardConfig
from caretz.guard.detector import Detector, fire
from caretz.guard.detectors_config import IdenticalCallConfig, RoundsConfig
from caretz.guard.guard import LoopGuard
from caretz.guard.holds import hold_cap
from caretz.guard.model import Firing, ToolObservation, TurnContext
from caretz.guard.rounds import RoundsDetector
from caretz.messages import ToolCall
from tests.guard.test_guard import Clock, Events
from tests.guard.test_rounds_and_progress import slow_cycle
from tests.scripted import NOT_STUCK, ScriptedJudge

TASK = "run the integration tests and make them pass"
KILLED = "[timed out after 120 s; the command and everything it started were killed]"


class Echo(Detector):
    """A check written after the guard: it fires on every call of one command, always
    with the same fingerprint, and has no code for verdicts or holds."""

    name = "echo"

    def __init__(self, command: str, size: int = 0):
        self.command = command
        self.size = size

    def after_tool(self, obs: ToolObservation) -> Firing | None:
        if obs.args.get("command") != self.command:
            return None
        return fire(self.name, self.command, f"again: {self.command}", step=obs.index,
                    size=self.size)  # fmt: skip


def guard_with(*detectors: Detector, **settings) -> tuple[LoopGuard, Events, ScriptedJudge]:
    judge, events = ScriptedJudge(), Events()
    config = LoopGuardConfig(mode="active", **settings)
    guard = LoopGuard(config, judge, events.emit, clock=Clock(),
                      detectors=list(detectors) or None)  # fmt: skip
    guard.begin_turn(TurnContext(task=TASK, model_ref="test/model"))
    return guard, events, judge


def play(guard: LoopGuard, steps: list[tuple[str, str, bool | None]]) -> None:
    for index, (command, output, failed) in enumerate(steps):
        guard.before_tool(ToolCall(id=f"c{index}", name="bash", arguments={"command": command}))
        guard.after_tool(
            ToolObservation(
                index=index, tool="bash", args={"command": command}, output=output, failed=failed
            )
        )


def asked(events: Events) -> list[tuple[int, str]]:
    """(call, 1-based; check) of every judge call."""
    return [(e["step"] + 1, e["trigger"]) for e in events.of("LoopGuard.Judging")]


def test_a_new_check_is_held_and_expires_without_code_of_its_own():
    guard, events, _ = guard_with(Echo("make"))
    play(guard, [("make", "built", False)] * 40)
    # "Not stuck" each time: asked again once its firings have doubled.
    assert [call for call, _ in asked(events)] == [1, 2, 4, 8, 16, 32]
    # A held firing is not even logged as fired.
    assert len(events.of("LoopGuard.Fired")) == 6


def test_a_pattern_that_never_grows_is_asked_about_again_after_the_cap():
    # It says its size is always 5: doubling never comes, the cap of calls does.
    guard, events, _ = guard_with(Echo("make", size=5), check_every=0)
    play(guard, [("make", "built", False)] * 90)
    assert [call for call, _ in asked(events)] == [1, 41, 81]
    assert hold_cap(20) == 40 and hold_cap(0) == 40 and hold_cap(7) == 14


def test_a_timeout_judged_fine_early_is_asked_about_again_when_it_keeps_coming_back():
    """The run's recording has no exit status for a killed command (as replayed
    trajectories often have none). Early on, the integration run times out and the
    agent tails the log, three times: a cycle, judged "not stuck" (slow services).
    Then the same timeout comes back six more times, between other calls; each time
    the cycle breaks off after a round or two. Before, the verdict on the cycle held
    both of its calls for good, and nothing asked again."""
    run = ("./run_integration.sh", "starting services...\n" + KILLED, None)
    tail = ("tail -3 logs/api.log", "api | waiting for db...\napi | waiting for db...", None)
    others = [
        ("docker compose ps", "NAME STATUS\ndb Up\napi Restarting (1)", False),
        ("grep -n timeout pytest.ini", "3:timeout = 600", False),
        ("head -3 docker-compose.yml", "services:\n  db:\n    image: postgres:16", False),
    ]
    steps = [run, tail] * 3
    for other in others:
        steps += [other, run, tail, run]
    guard, events, judge = guard_with()
    play(guard, steps)
    calls = asked(events)
    assert calls[0] == (6, "alternation")
    recurrences = [n + 1 for n, step in enumerate(steps) if step is run][3:]
    assert len(recurrences) == 6
    later = [call for call, _ in calls[1:]]
    assert later and later[0] <= recurrences[3], calls  # by its 4th recurrence at the latest
    assert "run_integration.sh" in judge.summaries[1]


def test_a_verdict_on_one_call_leaves_the_counts_of_another_call_alone():
    detector = IdenticalCallDetector(IdenticalCallConfig(window=10, max_in_window=3))
    detector.begin_turn(TurnContext(task=TASK, model_ref="test/model"))
    look, status = ("git log -1", "abc fix"), ("git status", "clean")
    sequence = [look, status, ("ls", "a"), look, status, ("ls b", "b"), look, status]
    firings = []
    for index, (command, output) in enumerate(sequence):
        firing = detector.after_tool(ToolObservation(index=index, tool="bash", args={"command": command},
                                                     output=output, failed=False))  # fmt: skip
        if firing is not None:
            firings.append(firing)
            detector.after_verdict(firing, NOT_STUCK)
    # The verdict on `git log` (3 of the last 10) leaves the count of `git status` alone.
    assert [(f.step, f.fingerprint) for f in firings] == [
        (6, 'bash({"command":"git log -1"})'),
        (7, 'bash({"command":"git status"})'),
    ]


def test_rounds_judged_fine_ask_again_once_they_have_doubled():
    guard, events, _ = guard_with(RoundsDetector(RoundsConfig()))
    observations = slow_cycle(13)
    for obs in observations:
        guard.before_tool(ToolCall(id=f"c{obs.index}", name=obs.tool, arguments=obs.args))
        guard.after_tool(obs)
    # Each round is three calls ending in the failing run: rounds 3, 6 and 12 ask,
    # the 9th (a firing of the check) is held.
    assert [call for call, _ in asked(events)] == [7, 16, 34]
    assert len(events.of("LoopGuard.Fired")) == 3
