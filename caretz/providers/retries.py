"""Retries of a model request: which failures are worth another attempt, how long to wait
before it, and the server's own words about a failure.

A failed attempt is retried up to `maxRetries` times with backoff (1 s, 2 s, 4 s… or the
server's Retry-After, at most a minute). An attempt that timed out (no answer within
firstByteTimeout, or a stream silent for streamIdleTimeout) is retried once: a server
silent twice in a row is not answering, so with the defaults a silent server fails in
under two minutes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from caretz import inbound
from caretz.lazy import lazy_module
from caretz.lazy_dataclass import lazy_dataclass
from caretz.messages import Message
from caretz.providers import wire
from caretz.providers.draft import CLIP_CHARS
from caretz.text import shorten

if TYPE_CHECKING:
    from email import utils as email_utils
else:
    email_utils = lazy_module("email.utils")  # a Retry-After HTTP date, rare: not loaded at start

MAX_BACKOFF_S = 30.0
# A server asking for a longer pause than this gets a retry after this long instead,
# so a session never sits silent for minutes.
MAX_RETRY_AFTER_S = 60.0
DEFAULT_FIRST_BYTE_TIMEOUT_S = 50.0  # firstByteTimeout: the request sent, no answer
DEFAULT_IDLE_TIMEOUT_S = 50.0  # streamIdleTimeout: the answer began, then no byte
TIMEOUT_RETRIES = 1  # attempts that timed out are retried this many times at most


class RequestLimits(NamedTuple):
    """How long a request may wait and how often it is tried again: the profile's
    firstByteTimeout, streamIdleTimeout and maxRetries, the same for every model a session
    asks (its own, the loop guard's judge, the goal's evaluator)."""

    first_byte_timeout_s: float = DEFAULT_FIRST_BYTE_TIMEOUT_S
    idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S
    max_retries: int = 4


def is_retryable_status(status: int) -> bool:
    return status in (408, 429) or 500 <= status <= 599


def retry_after_seconds(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """The pause a server asked for via retry-after-ms or Retry-After (seconds or HTTP date)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email_utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def retry_delay(retry_number: int, headers: Mapping[str, str]) -> float:
    """Seconds before retry `retry_number` (1-based): the server's hint, else 1, 2, 4… ≤ 30."""
    hinted = retry_after_seconds(headers)
    if hinted is not None:
        return min(hinted, MAX_RETRY_AFTER_S)
    return min(2.0 ** (retry_number - 1), MAX_BACKOFF_S)


def error_detail(response: wire.Response) -> str:
    """The server's own words about an HTTP error, e.g. "overloaded_error: Overloaded"."""
    try:
        payload = inbound.load_json(response.read(), "the error")
    except ValueError:
        return shorten(response.text.strip(), CLIP_CHARS) or response.reason_phrase or "no details"
    return describe_error(payload) or shorten(response.text.strip(), CLIP_CHARS) or "no details"


def describe_error(payload: Any) -> str:
    if not isinstance(payload, dict):
        return ""
    error = payload.get("error", payload)
    if isinstance(error, str):
        return error
    if not isinstance(error, dict):
        return ""
    kind = error.get("type") or error.get("code")
    message = error.get("message") or error.get("detail")
    return ": ".join(str(part) for part in (kind, message) if part)


@lazy_dataclass(frozen=True, kw_only=True)
class FailedAttempt:
    """Why an attempt failed in a way worth another, and what it had."""

    reason: str
    status: int | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    partial: Message | None = None  # what the attempt streamed before it broke off
    refused: bool = False  # nothing listens at the URL
    timed_out: bool = False  # no answer, or a stream gone silent (TIMEOUT_RETRIES)
