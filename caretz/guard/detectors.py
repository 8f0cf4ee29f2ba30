"""Peer-style detectors: more cheap triggers beside the guard's own checks.

Each detector watches for one kind of loop that other agents catch (identical
calls, a repeated error, ping-pong, text-only rounds, circular subagents, a
streamed text or reasoning loop, the same answer turn after turn, a runaway
tool count) and returns a Firing. Its severity says what the guard does:
"judge" asks the judge model, "warn" tells the model once, "block" refuses the
call, "stop" acts at once (only where waiting would keep burning tokens).

Counting rules shared by all of them (`guard/counting.py`):
- a judge-level check fires when its count reaches the threshold, then counts
  again from there, so it fires again only after another full threshold;
- a verdict restarts the judge-level counts of what it was asked about (the
  detector that fired; a repeated-error run also restarts after the repeat
  trigger's verdict on the same failure), never those of an unrelated check;
  "stop" levels keep counting, so a judge that times out (which counts as
  "not stuck") cannot let a loop run forever.

The checks live by what they watch: `calls.py` (tool calls and their results),
`streams.py` (streamed answer and reasoning), `turns.py` (whole turns),
`delegation.py` (subagents).
"""

from __future__ import annotations

from caretz.guard.calls import AlternationDetector, IdenticalCallDetector, RepeatedErrorDetector
from caretz.guard.delegation import DelegationChain as DelegationChain  # guard.py's too
from caretz.guard.delegation import SubagentDetector
from caretz.guard.detector import Detector
from caretz.guard.detectors_config import DetectorsConfig
from caretz.guard.progress import NoProgressDetector
from caretz.guard.rounds import RoundsDetector
from caretz.guard.streams import ReasoningDetector, StreamTextDetector
from caretz.guard.turns import SameAnswerDetector, ToolBudgetDetector, ToolRoundsDetector


def build_detectors(
    config: DetectorsConfig, delegation: DelegationChain | None = None
) -> list[Detector]:
    """The enabled peer detectors for one session (or one agent of it).

    `delegation` is the session's delegation chain; give subagents the chain
    of the session that starts them so circular hand-offs are seen.
    """
    candidates: list[tuple[bool, Detector]] = [
        (config.subagents.enabled, SubagentDetector(config.subagents, delegation)),
        (config.tool_budget.enabled, ToolBudgetDetector(config.tool_budget)),
        (config.identical_call.enabled, IdenticalCallDetector(config.identical_call)),
        (config.repeated_error.enabled, RepeatedErrorDetector(config.repeated_error)),
        (config.alternation.enabled, AlternationDetector(config.alternation)),
        (config.rounds.enabled, RoundsDetector(config.rounds)),
        (config.no_progress.enabled, NoProgressDetector(config.no_progress)),
        (config.tool_rounds.enabled, ToolRoundsDetector(config.tool_rounds)),
        (config.stream_text.enabled, StreamTextDetector(config.stream_text)),
        (config.reasoning.enabled, ReasoningDetector(config.reasoning)),
        (config.same_answer.enabled, SameAnswerDetector(config.same_answer)),
    ]
    return [detector for enabled, detector in candidates if enabled]
