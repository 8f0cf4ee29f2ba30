"""Turn policy: what runs after a turn by itself.

Today that is the loop guard's autoResume: after a loop stop the turn's result
carries the automated message that resumes it (while `maxResumes` allows), and
the driver sends it as a turn that is not from the user. Headless runs and the
interactive session both drive their turns through here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from caretz.agent.agent import Agent
from caretz.agent.outcomes import Outcome
from caretz.lazy import lazy_module
from caretz.messages import Image

if TYPE_CHECKING:
    from caretz.session.records import guard as guard_records
else:
    # The guard's records: loaded by the guard by the time it resumes a turn, never without it.
    guard_records = lazy_module("caretz.session.records.guard")


def run_with_auto_resume(agent: Agent, prompt: str, images: Sequence[Image] = ()) -> Outcome:
    """One turn (with `images` attached to its prompt), then the guard's automatic
    resumes after a loop stop, if configured."""
    result = agent.run_turn(prompt, images=images)
    while result.resume is not None:
        resume = result.resume
        agent.parts.log.emit(
            guard_records.LoopGuardResuming(
                count=resume.count, max=resume.max_resumes, message=resume.message
            )
        )
        result = agent.run_turn(resume.message, from_user=False)
    return result
