"""Whether a prompt can fit the model's window at all, asked before its turn starts.

Compaction makes room by summarizing and trimming older steps, never the prompt itself:
a prompt over the window (less the reply's room) by itself would be sent, refused as too
long, compacted for nothing and refused again. So it is refused before anything is sent,
with one line saying how far over it is.
"""

from __future__ import annotations

from collections.abc import Sequence

from caretz.agent.compaction import estimate_tokens
from caretz.agent.parts import AgentConfig, AgentParts
from caretz.messages import Image, Message


def prompt_too_large(
    config: AgentConfig, parts: AgentParts, prompt: str, images: Sequence[Image] = ()
) -> str | None:
    """Why `prompt` can never fit the model's window (one line), or None when it can.
    The prompt alone is weighed (a rough count could wrongly refuse a small window's
    prompt if the system prompt and tools were counted too): one that fits alone but not
    with the rest is the provider's to refuse, and compaction's to answer."""
    policy = parts.compaction
    if policy is None:
        return None
    window, reply = policy.context_window, policy.reserved_output
    room = window - reply if reply <= window // 2 else window
    tokens = estimate_tokens("", [Message(role="user", content=prompt, images=list(images))])
    if tokens <= room:
        return None
    kept = f" ({reply:,} of them kept for the reply)" if room < window else ""
    return (
        f"the prompt is too large for the model's window: about {tokens:,} tokens, where "
        f"{config.model_ref} takes {window:,}{kept}; nothing was sent: send a smaller "
        "part, or save it to a file in the project and ask for what to read in it"
    )
