"""What every provider speaks: one request in, a stream of plain events out."""

from __future__ import annotations

import re
from collections.abc import Iterator
from threading import Event
from typing import Protocol

from caretz.lazy_dataclass import lazy_dataclass
from caretz.messages import Message, ModelRequest, ModelResponse


@lazy_dataclass(frozen=True)
class TextDelta:
    text: str


@lazy_dataclass(frozen=True)
class ThinkingDelta:
    text: str


@lazy_dataclass(frozen=True)
class ToolCallStarted:
    id: str
    name: str


@lazy_dataclass(frozen=True)
class Retrying:
    attempt: int
    delay_s: float
    reason: str
    # The attempt's reply so far, when it broke off mid-stream: the retry replaces it.
    discarded: Message | None = None


@lazy_dataclass(frozen=True)
class Waiting:
    """The request went out `waited_s` ago and no answer has come yet; at `limit_s`
    (firstByteTimeout) the attempt is given up. Told about once a second."""

    waited_s: float
    limit_s: float


@lazy_dataclass(frozen=True)
class Completed:
    response: ModelResponse


StreamEvent = TextDelta | ThinkingDelta | ToolCallStarted | Retrying | Waiting | Completed


class Provider(Protocol):
    """A model endpoint. `stream` yields deltas, then exactly one `Completed`.

    Closing the iterator early aborts the HTTP request.
    """

    name: str

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]: ...


def abort(provider: Provider) -> None:
    """End `provider`'s request in flight from another thread, where it can: the HTTP
    providers shut their connections down (`SSEProvider.abort`); others do nothing."""
    aborting = getattr(provider, "abort", None)
    if callable(aborting):
        aborting()


class ProviderError(Exception):
    """A provider failed in a way retrying will not fix (or retries ran out)."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        partial: Message | None = None,
        images_refused: bool = False,
    ):
        super().__init__(message)
        self.status = status
        # What had streamed before a mid-stream failure, so the log keeps it.
        self.partial = partial
        # The model does not take images (`refuses_images`): fixed by another model.
        self.images_refused = images_refused


# How providers say a prompt does not fit the model's context window: Anthropic's 400
# "prompt is too long" (and "input length and `max_tokens` exceed context limit"),
# OpenAI's `context_length_exceeded` ("maximum context length", "exceeds the context
# window"), llama.cpp's `exceed_context_size_error`.
_PROMPT_TOO_LONG = re.compile(
    r"prompt is too long|context_length_exceeded|maximum context length|context window"
    r"|exceed context limit|exceed_context_size|exceeds the available context size",
    re.IGNORECASE,
)
_TOKEN_COUNT = re.compile(r"(\d[\d,]*) (?:input )?tokens", re.IGNORECASE)


# How endpoints say a model takes no images: OpenAI's "image_url is only supported by
# certain models" (and "does not support image input"), llama.cpp's "image input is not
# supported" (a server started without its mmproj), vLLM's "is not a multimodal model",
# Ollama's "does not support images", and the like.
_NO_IMAGES = re.compile(
    r"image_url is only supported|image input is not supported|not a multimodal model"
    r"|(does not|doesn't) support (image|vision)|(image|vision)s? (input )?(is |are )?not supported"
    r"|unsupported content type.{0,20}image|invalid content type.{0,40}image",
    re.IGNORECASE,
)


def refuses_images(detail: str) -> bool:
    """Whether an endpoint's error says the model cannot take images."""
    return bool(_NO_IMAGES.search(detail))


def has_images(request: ModelRequest) -> bool:
    return any(message.images for message in request.messages)


def is_prompt_too_long(error: ProviderError) -> bool:
    """Whether the provider refused the request because the prompt is over the window."""
    return error.status in (400, 413, None) and bool(_PROMPT_TOO_LONG.search(str(error)))


def reported_prompt_tokens(message: str) -> int | None:
    """The largest token count a "prompt is too long" message names, if any."""
    counts = [int(found.replace(",", "")) for found in _TOKEN_COUNT.findall(message)]
    return max(counts) if counts else None


def collect(events: Iterator[StreamEvent], cancelled: Event | None = None) -> ModelResponse:
    """Drain a stream and return its final response; the stream is closed either way.

    Once `cancelled` is set, the next event ends the wait with a ProviderError.
    """
    try:
        for event in events:
            if cancelled is not None and cancelled.is_set():
                raise ProviderError("cancelled")
            if isinstance(event, Completed):
                return event.response
    finally:
        close = getattr(events, "close", None)
        if close is not None:
            close()
    raise ProviderError("the stream ended without a final response")
