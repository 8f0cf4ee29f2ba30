"""Settings of the peer-style detectors under `loopGuard.detectors`.

Each detector can be switched off (`enabled: false`) and has its own
thresholds. A value of 0 for a threshold turns that one check off. Defaults are
chosen so that productive work (a long turn fixing different errors, a test
re-run after each real edit, polling whose output changes) is never
interrupted; docs/detectors.md gives the reason for each one, and the figures
from replaying the labelled trajectory corpus.
"""

from __future__ import annotations

from pydantic import Field, ValidationInfo, field_validator, model_validator
from pydantic.alias_generators import to_camel

from caretz.config_section import Section

_KEY = "loopGuard.detectors"


def _zero_or_at_least(value: int, minimum: int, key: str) -> int:
    if value != 0 and value < minimum:
        raise ValueError(f"{_KEY}.{key} must be 0 (off) or at least {minimum}, got {value}")
    return value


def _below(lower: float, upper: float, lower_key: str, upper_key: str) -> None:
    """Two levels of one check: the later one must come later (0 = that level is off)."""
    if lower and upper and upper <= lower:
        raise ValueError(
            f"{_KEY}.{upper_key} ({upper}) must be greater than {_KEY}.{lower_key} ({lower})"
        )


class IdenticalCallConfig(Section):
    enabled: bool = True
    # 3 in a row asks the judge: two redundant repeats of a call that changed nothing
    # (caveman's RetryLoopBreaker stops on the 4th; Cline warns at 3). Cheap, because the judge decides.
    warn_streak: int = Field(3, ge=0)
    # 8 in a row acts without the judge: by then the judge has been asked twice
    # (3, 6), and a broken or slow judge ("not stuck" on timeout) must not let a
    # loop run forever. Lower than Goa's 15, which counts without outcomes.
    interrupt_streak: int = Field(8, ge=0)
    # The same call with the same result 6 times anywhere in the turn, spread out
    # between other calls (Goa leaves it off; the anti-looping guardrail counts per task). No
    # productive corpus turn repeats a call+result more than 4 times: 6 keeps a margin.
    max_total: int = Field(6, ge=0)
    # 5 of the last 10 calls the same call and result (the anti-looping guardrail's "3+ in 5" at twice
    # the span, so an edit/run rhythm around one repeated call is still seen). No
    # productive corpus turn has more than 3 in any 10.
    window: int = Field(10, ge=0)
    max_in_window: int = Field(5, ge=0)
    # Count a repeat only when its result is also the same (after normalizing):
    # polling or paging whose output changes is progress, not a loop. A call that
    # returns something new also restarts the spread-out counts (total, window),
    # so the `sleep` between two polls is not a loop either. Off, the turn total
    # alone fired on 12 of 15 productive corpus turns (tests re-run after edits).
    same_result_only: bool = True

    @model_validator(mode="after")
    def _levels(self) -> IdenticalCallConfig:
        _below(
            self.warn_streak,
            self.interrupt_streak,
            "identicalCall.warnStreak",
            "identicalCall.interruptStreak",
        )
        if self.window and self.max_in_window > self.window:
            raise ValueError(
                f"{_KEY}.identicalCall.maxInWindow ({self.max_in_window}) cannot exceed "
                f"{_KEY}.identicalCall.window ({self.window})"
            )
        return self


class RepeatedErrorConfig(Section):
    enabled: bool = True
    # The identical (normalized) error on 3 failed calls in a row, with no success
    # between them: two honest tries first. The anti-looping guardrail fires at 2; on the corpus that
    # fired on 4 of 15 productive turns (one redundant retry, then a change of
    # approach), so 2 is a setting, not the default. A test re-run after a real edit
    # is never caught here: the edit succeeds in between.
    consecutive: int = Field(3, ge=0)
    # The same edit (identical arguments) failing with the same error for the 2nd
    # time in the turn, even with other calls between: the anti-looping guardrail's "file edit made
    # twice with same error".
    same_edit: int = Field(2, ge=0)
    # Which tools make edits (caretz's own names).
    edit_tools: list[str] = Field(default_factory=lambda: ["edit", "write", "multi_edit"])

    @field_validator("consecutive", "same_edit")
    @classmethod
    def _two_or_off(cls, value: int, info: ValidationInfo) -> int:
        return _zero_or_at_least(value, 2, f"repeatedError.{to_camel(info.field_name or '')}")


class AlternationConfig(Section):
    enabled: bool = True
    # Cycles of 2..10 calls (A,B,A,B / A,B,C,A,B,C / a replayed 9-step sequence).
    # Every position must also give the same result each cycle, so even a long
    # period stays safe: nothing changed across the whole replay. On the corpus, 10
    # catches two replayed multi-step sequences that 4 misses, with no false alarm.
    max_period: int = Field(10, ge=2)
    # The cycle plays 3 times (OpenHands' ping-pong: A,B three times); 2 added a
    # firing on a productive corpus turn (two look-ups repeated once).
    repeats: int = Field(3, ge=0)

    @field_validator("repeats")
    @classmethod
    def _repeats(cls, value: int) -> int:
        return _zero_or_at_least(value, 2, "alternation.repeats")


class ToolRoundsConfig(Section):
    enabled: bool = True
    # 50 responses in a row that call tools and say nothing to the user. Many models
    # never write text between calls, so Goa's 15 would nag every long turn; the
    # periodic judge check (checkEvery) already looks at wandering turns, so this is
    # only a late, cheap nudge. It warns, it never stops.
    max_rounds: int = Field(50, ge=0)
    recovery_message: str = (
        "You have made many tool calls in a row without writing anything to the user. "
        "If you already have what you need, stop calling tools and answer with the "
        "information gathered so far. If not, say in one sentence what is still missing, "
        "then carry on."
    )


class SubagentsConfig(Section):
    enabled: bool = True
    # main → 1 → 2 → 3: one level more than the anti-looping guardrail (depth > 2 refused), so a
    # planner → implementer → tester chain still works; cycles are refused at any depth.
    max_depth: int = Field(3, ge=0)
    block_circular: bool = True  # A delegates to B, B back to A (or A to A)


class StreamTextConfig(Section):
    enabled: bool = True
    # A unit of 50+ characters repeated 5 times in a row, exactly, at the end of the
    # streamed answer (Goa's values). The unit must be its own shortest period,
    # so rules of "=====" or a table's "|---|" rows are not units.
    min_period: int = Field(50, ge=8)
    max_repeats: int = Field(5, ge=0)
    # Inside a ``` code block identical lines are sometimes real (fixtures, matrices),
    # so a loop there needs 20 repeats. 0 ignores code blocks entirely.
    max_repeats_in_code: int = Field(20, ge=0)
    # Stream loops counted across turns (Goa's value); the last strike's message
    # asks the model to drop the text. Within a turn the guard's stop rule applies.
    max_strikes: int = Field(3, ge=1)
    # 10 clean responses / tool calls clear the strikes; 0 = never cleared (until a
    # genuine user turn).
    reset_after: int = Field(10, ge=0)

    @field_validator("max_repeats", "max_repeats_in_code")
    @classmethod
    def _repeats(cls, value: int, info: ValidationInfo) -> int:
        return _zero_or_at_least(value, 2, f"streamText.{to_camel(info.field_name or '')}")


class ReasoningConfig(Section):
    enabled: bool = True
    # Lines shorter than 20 characters ("Wait.", "Hmm, no.") repeat naturally.
    min_line_chars: int = Field(20, ge=1)
    # One significant line 5 times in one response (Roo Code's reasoning detector).
    max_line_repeats: int = Field(5, ge=0)
    # Low diversity: of the last 30 significant lines, fewer than 30% distinct (a
    # rotation of a few lines that each stay under max_line_repeats). 0 = off.
    diversity_window: int = Field(30, ge=0)
    min_distinct_ratio: float = Field(0.3, ge=0.0, le=1.0)
    stall_detection: bool = True
    # Reasoning-only streaming, no answer text and no tool call. Hosted models with
    # high effort think for a minute or two; 3 minutes warns, 10 minutes stops the
    # stream. Raise both for slow local models.
    stall_warn_seconds: float = Field(180.0, ge=0)
    stall_stop_seconds: float = Field(600.0, ge=0)

    @model_validator(mode="after")
    def _levels(self) -> ReasoningConfig:
        _below(
            self.stall_warn_seconds,
            self.stall_stop_seconds,
            "reasoning.stallWarnSeconds",
            "reasoning.stallStopSeconds",
        )
        return self


class SameAnswerConfig(Section):
    enabled: bool = True
    # The same final answer 2 more times after the first, across consecutive
    # automated turns (auto-resume, goal continuation) with no progress (Goa's runaway guard).
    max_repeats: int = Field(2, ge=0)


class ToolBudgetConfig(Section):
    enabled: bool = True
    # Tool calls in one turn. The longest productive corpus turn has 145 calls, so
    # 200 only tells the model how many remain; 400 is the hard stop, a backstop
    # for a turn the judge keeps calling productive.
    warn_at: int = Field(200, ge=0)
    stop_at: int = Field(400, ge=0)

    @model_validator(mode="after")
    def _levels(self) -> ToolBudgetConfig:
        _below(self.warn_at, self.stop_at, "toolBudget.warnAt", "toolBudget.stopAt")
        return self


class RoundsConfig(Section):
    enabled: bool = True
    # Rounds of calls ending in the same failure (its core: the telling line without
    # the tool or a test id), whatever commands each round used. 3, as repeatThreshold:
    # two honest tries first. Back-to-back failures of one core count as one round.
    threshold: int = Field(3, ge=0)


class NoProgressConfig(Section):
    enabled: bool = True
    # Calls in a row that changed no task file and returned nothing new (no output
    # and no failure that an earlier call had not returned). Sooner than checkEvery
    # (20); a productive turn keeps learning something new. 0 turns it off.
    calls: int = Field(8, ge=0)


class AutoResumeConfig(Section):
    # Off, as in Goa: a stopped turn waits for the user unless asked otherwise.
    enabled: bool = False
    message: str = "loop detected and you were stopped - resume now"
    max_resumes: int = Field(3, ge=0)  # in a row; a genuine user turn resets the count


class DetectorsConfig(Section):
    identical_call: IdenticalCallConfig = Field(default_factory=IdenticalCallConfig)
    repeated_error: RepeatedErrorConfig = Field(default_factory=RepeatedErrorConfig)
    alternation: AlternationConfig = Field(default_factory=AlternationConfig)
    tool_rounds: ToolRoundsConfig = Field(default_factory=ToolRoundsConfig)
    subagents: SubagentsConfig = Field(default_factory=SubagentsConfig)
    stream_text: StreamTextConfig = Field(default_factory=StreamTextConfig)
    reasoning: ReasoningConfig = Field(default_factory=ReasoningConfig)
    same_answer: SameAnswerConfig = Field(default_factory=SameAnswerConfig)
    tool_budget: ToolBudgetConfig = Field(default_factory=ToolBudgetConfig)
    rounds: RoundsConfig = Field(default_factory=RoundsConfig)
    no_progress: NoProgressConfig = Field(default_factory=NoProgressConfig)
    auto_resume: AutoResumeConfig = Field(default_factory=AutoResumeConfig)
    # Per-tool deny patterns: {"bash": ["rm -rf", "git push --force"], "write": ["*.env"]}.
    # They apply in every mode, `off` included: they are a safety rule, not a judgement.
    disallowed_tools: dict[str, list[str]] = Field(default_factory=dict)
