"""What a model can hold and write: its context window, its output limit, whether it
thinks, whether it sees images.

A small table of the Anthropic and OpenAI families, matched by pattern against the
model ID (the part after the last "/", lower-cased, so `anthropic/claude-opus-4-5`,
`openrouter/anthropic/claude-sonnet-4.5` and a dated `claude-sonnet-4-5-20250929` all
match). The first pattern that fits wins; a model no pattern fits gets `DEFAULT`, a
conservative guess that fits nearly every current model. The profile's `contextWindow`
and `maxTokens` replace the table's figures; a llama.cpp server's own `n_ctx` (its
`/props`) replaces the window (see `server_context_window`). docs/configuration.md
lists the table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from caretz import inbound
from caretz.lazy import lazy_module
from caretz.lazy_dataclass import lazy_dataclass
from caretz.messages import ProtocolName, Reasoning
from caretz.text import glob_matches

if TYPE_CHECKING:
    from caretz.providers import wire
else:
    # The HTTP client (h11): only to ask a llama.cpp server its window; the settings import this.
    wire = lazy_module("caretz.providers.wire")

# A request asks for at most this many output tokens unless the profile says more: a
# reply this long is already rare, and the rest of the model's limit stays unreserved.
REQUEST_CAP = 32_000
DEFAULT_REASONING: Reasoning = "medium"  # for a model that thinks, when the profile is silent


@lazy_dataclass(frozen=True)
class ModelLimits:
    family: str  # the table's pattern that matched, or "default"
    context_window: int  # tokens the model reads: the most a prompt may be
    max_output: int  # the most tokens the model writes in one reply
    # Which protocol's thinking the model speaks (Anthropic `thinking`, OpenAI
    # `reasoning_effort`); None: it has none caretz turns on by default.
    thinks_on: ProtocolName | None = None
    # Whether it takes images: False for a family known to be text-only; None: unknown
    # (the images are sent, and the provider's refusal is the answer).
    sees_images: bool | None = None

    @property
    def default_max_tokens(self) -> int:
        return min(self.max_output, REQUEST_CAP)

    def default_reasoning(self, protocol: ProtocolName) -> Reasoning:
        """Thinking on (medium) for a model that supports it on this protocol, else off."""
        return DEFAULT_REASONING if self.thinks_on == protocol else "off"


def _family(
    pattern: str,
    window: int,
    output: int,
    thinks: ProtocolName | None,
    sees_images: bool | None = True,
) -> ModelLimits:
    return ModelLimits(pattern, window, output, thinks, sees_images)


# First match wins: the narrower patterns of a family come before the wider ones.
TABLE: tuple[ModelLimits, ...] = (
    # Anthropic
    _family("claude-3-haiku*", 200_000, 4_096, None),
    _family("claude-3-5-haiku*", 200_000, 8_192, None, sees_images=None),  # text at launch
    _family("claude-3-5-*", 200_000, 8_192, None),
    _family("claude-3-opus*", 200_000, 4_096, None),
    _family("claude-3-7-sonnet*", 200_000, 64_000, "anthropic"),
    _family("claude-opus-4", 200_000, 32_000, "anthropic"),
    _family("claude-opus-4-[01]*", 200_000, 32_000, "anthropic"),
    _family("claude-opus-4.[01]*", 200_000, 32_000, "anthropic"),
    _family("claude-opus-*", 200_000, 64_000, "anthropic"),  # 4.5 and later
    _family("claude-sonnet-*", 200_000, 64_000, "anthropic"),
    _family("claude-haiku-*", 200_000, 64_000, "anthropic"),
    # OpenAI
    _family("gpt-5*-chat*", 128_000, 16_384, None),
    # GPT-5 and later: 400k in all, of which the prompt may be 272k.
    _family("gpt-[5-9]*", 272_000, 128_000, "openai"),
    _family("gpt-4.1*", 1_047_576, 32_768, None),
    _family("gpt-4o*", 128_000, 16_384, None),
    _family("gpt-3.5*", 16_385, 4_096, None, sees_images=False),
    _family("o1-mini*", 128_000, 65_536, "openai", sees_images=False),
    _family("o3-mini*", 200_000, 100_000, "openai", sees_images=False),
    _family("o[134]*", 200_000, 100_000, "openai"),
    _family("gpt-oss-*", 131_072, 32_768, None, sees_images=False),
)
DEFAULT = ModelLimits("default", 128_000, 8_192, None)
TEXT_ONLY = "caretz's model table knows it as text-only"


def model_name(model: str) -> str:
    """The part of a model ref or ID the table matches: after the last "/", lower-cased."""
    return model.rsplit("/", 1)[-1].strip().lower()


def limits_for(model: str) -> ModelLimits:
    """The table's limits for a model ref or ID; `DEFAULT` when no family fits."""
    name = model_name(model)
    for limits in TABLE:
        if glob_matches(name, limits.family):
            return limits
    return DEFAULT


def images_refusal(model: str) -> str | None:
    """Why `model` cannot be sent images, when the table knows it as text-only; else None."""
    if limits_for(model).sees_images is False:
        return f"model {model} does not take images ({TEXT_ONLY})"
    return None


def reported_context(props: Any) -> int | None:
    """`n_ctx` from a llama.cpp server's /props (or /slots) answer, when it has one."""
    if isinstance(props, list):  # /slots: one entry per slot, each with its n_ctx
        props = props[0] if props else {}
    if not isinstance(props, dict):
        return None
    settings = props.get("default_generation_settings")
    for source in (settings, props):
        value = source.get("n_ctx") if isinstance(source, dict) else None
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def server_context_window(root_url: str, timeout_s: float = 2.0) -> int | None:
    """The context a llama.cpp server at `root_url` was started with (GET /props, then
    /slots); None when it does not say (another kind of server, an error, no answer)."""
    for path in ("/props", "/slots"):
        try:
            # No proxy: a proxy from the environment must not get loopback traffic.
            response = wire.get(root_url.rstrip("/") + path, timeout_s)
            if response.status_code != 200:
                continue
            window = reported_context(inbound.load_json(response.read(), "the answer"))
        except (wire.WireError, ValueError):
            continue
        if window is not None:
            return window
    return None
