"""Circular hand-offs between subagents, and delegation nested too deep."""

from __future__ import annotations

from dataclasses import dataclass, field

from caretz.guard.detector import Detector, fire
from caretz.guard.detectors_config import SubagentsConfig
from caretz.guard.model import Firing, TurnContext
from caretz.messages import ToolCall

SUBAGENT_TOOL = "task"


@dataclass
class DelegationChain:
    """Who delegated to whom in this session: the agent name at each depth.

    One chain is shared by every agent of a session, so a subagent's detectors
    see the agents above it (pass it to `build_detectors` for each of them).
    """

    names: list[str] = field(default_factory=list)

    def enter(self, depth: int, agent_name: str) -> None:
        del self.names[depth:]
        self.names.extend([""] * (depth - len(self.names)))
        self.names.append(agent_name)

    def above(self, depth: int) -> list[str]:
        """The agents from the top of the session down to `depth`, inclusive."""
        return [name for name in self.names[: depth + 1] if name]


class SubagentDetector(Detector):
    """Circular hand-offs (A → B → A) and delegation beyond the maximum depth, as the
    anti-looping guardrail refuses them.

    A subagent runs through the `task` tool, whose `agent` argument names it.
    """

    name = "subagents"

    def __init__(self, config: SubagentsConfig, chain: DelegationChain | None = None):
        self.config = config
        self.chain = chain if chain is not None else DelegationChain()
        # Turns in progress, innermost last: a subagent that shares this detector
        # with its parent runs inside the parent's turn.
        self._turns: list[TurnContext] = []

    def begin_turn(self, ctx: TurnContext) -> None:
        while self._turns and self._turns[-1].depth >= ctx.depth:
            self._turns.pop()
        self._turns.append(ctx)
        self.chain.enter(ctx.depth, ctx.agent_name)

    def end_turn(self, final_text: str, progress: bool) -> Firing | None:
        if len(self._turns) > 1:
            self._turns.pop()
            current = self._turns[-1]
            self.chain.enter(current.depth, current.agent_name)
        return None

    def before_tool(self, call: ToolCall, index: int) -> Firing | None:
        if call.name != SUBAGENT_TOOL:
            return None
        current = self._turns[-1] if self._turns else TurnContext(task="", model_ref="")
        args = call.arguments
        # The name the subagent runs as: its role name, else the named agent it is.
        target = str(args.get("agent") or str(args.get("subagent_type") or "").strip().lower())
        chain = self.chain.above(current.depth)
        if self.config.block_circular and target and target in chain:
            path = " → ".join([*chain, target])
            return self._block(
                f"circular:{path}",
                f"circular hand-off {path}",
                index,
                f"Delegation to {target!r} refused: {target!r} is already working on this "
                f"({path}). Do the work yourself, or finish and report back to the agent "
                "that asked you.",
            )
        depth = current.depth + 1
        limit = self.config.max_depth
        if limit and depth > limit:
            return self._block(
                f"depth:{target}",
                f"depth {depth} > {limit} delegating to {target or 'a subagent'}",
                index,
                f"Delegation refused: it would nest subagents {depth} deep, and the limit is "
                f"{limit}. Do this part yourself.",
            )
        return None

    def _block(self, fingerprint: str, what: str, index: int, message: str) -> Firing:
        return fire(self.name, fingerprint, what, "block", index, message)
