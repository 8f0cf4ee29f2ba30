"""What both wire protocols share: SSE framing, the parser seam, retries.

A protocol module supplies the URL path, the headers, the request body and a parser
that turns SSE events into stream events, building the reply in a MessageDraft
(draft.py). `SSEProvider.stream` does the HTTP (wire.py), the retrying and the error
messages, so both protocols fail and retry the same way.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
import weakref
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from dataclasses import field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, ClassVar

from caretz import __version__, inbound
from caretz.lazy import lazy_module
from caretz.lazy_dataclass import lazy_dataclass
from caretz.messages import Message, ModelRequest
from caretz.providers import wire
from caretz.providers.base import (
    Completed,
    ProviderError,
    Retrying,
    StreamEvent,
    has_images,
    refuses_images,
)
from caretz.providers.draft import CLIP_CHARS, MessageDraft, OutputBound
from caretz.text import shorten

if TYPE_CHECKING:
    from caretz.providers.entry import ProviderEntry

email_utils = lazy_module("email.utils")  # a Retry-After HTTP date, rare: not loaded at start

MAX_BACKOFF_S = 30.0
DEFAULT_IDLE_TIMEOUT_S = 90.0  # streamIdleTimeout: no byte (nor keep-alive) for this long
QUICK_RETRY_S = 0.5  # before the one retry of a refused connection to a URL the user gave
# A server asking for a longer pause than this gets a retry after this long instead,
# so a session never sits silent for minutes.
MAX_RETRY_AFTER_S = 60.0


# --- SSE framing -------------------------------------------------------------------------


@lazy_dataclass(frozen=True)
class SSEEvent:
    event: str  # "" when the server named none (OpenAI-style streams)
    data: str


def iter_sse(lines: Iterable[str]) -> Iterator[SSEEvent]:
    """Group decoded lines into server-sent events (a blank line ends an event)."""
    event, data = "", []
    for line in lines:
        if not line:
            if data:
                yield SSEEvent(event, "\n".join(data))
            event, data = "", []
            continue
        if line.startswith(":"):  # a comment / keep-alive
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
    if data:
        yield SSEEvent(event, "\n".join(data))


class StreamFailure(Exception):
    """The stream said something went wrong, or said something unreadable."""

    def __init__(self, reason: str, *, retryable: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable


def load_chunk(data: str) -> dict[str, Any]:
    """One event's data, read the one way data from outside is (caretz/inbound.py)."""
    try:
        value = inbound.load_json(data, "the chunk")
    except inbound.BadInput as problem:
        raise StreamFailure(f"malformed chunk ({problem}): {inbound.clipped(data)}") from None
    if not isinstance(value, dict):
        raise StreamFailure(f"malformed chunk (not a JSON object): {inbound.clipped(data)}")
    return value


def is_transient(kind: str) -> bool:
    """Whether an error type named by a server is worth retrying."""
    kind = kind.lower()
    return any(
        word in kind
        for word in ("overloaded", "rate_limit", "server_error", "api_error", "timeout")
    )


# --- Parsing a stream --------------------------------------------------------------------


class StreamParser:
    """Turns one protocol's SSE events into caretz stream events, building the reply in `draft`."""

    def __init__(self) -> None:
        self.draft = MessageDraft()
        self.done = False  # the end-of-stream marker arrived; stop reading

    def feed(self, event: SSEEvent) -> Iterator[StreamEvent]:
        raise NotImplementedError


def read_event(parser: StreamParser, event: SSEEvent) -> Iterator[StreamEvent]:
    """The parser's events for one SSE event. A parser reads fields by the types the
    protocol gives them; a server that sends another type (a list for an object, a number
    for a name) sent a malformed event, which fails the stream with one line."""
    try:
        yield from parser.feed(event)
    except (TypeError, AttributeError, KeyError, IndexError, ValueError, RecursionError) as error:
        what = f"{type(error).__name__}: {error}"
        raise StreamFailure(f"malformed event ({what}): {inbound.clipped(event.data)}") from None


# --- Retries --------------------------------------------------------------------------


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


@lazy_dataclass(frozen=True)
class _Retry:
    reason: str
    status: int | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    partial: Message | None = None  # what the attempt streamed before it broke off
    refused: bool = False  # nothing listens at the URL


# --- The provider base ----------------------------------------------------------------


class SSEProvider:
    """A provider that POSTs a JSON body and reads an SSE stream back, with retries.

    Subclasses set `path` and `stop_aliases` and implement `auth_headers`,
    `build_body` and `new_parser`.
    """

    path: ClassVar[str]
    stop_aliases: ClassVar[Mapping[str, str]] = {}

    def __init__(
        self,
        entry: ProviderEntry,
        api_key: str | None,
        *,
        base_url: str | None = None,
        max_retries: int = 4,
        sleep: Callable[[float], None] = time.sleep,
        timeout_s: float = 600,
        idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S,
        explicit_url: bool = False,
        client: wire.Client | None = None,
        server_search: int | None = None,
    ):
        self.name = entry.name
        # The provider's own web search, at most this many searches a request (None: not
        # offered); only the protocols that have one read it.
        self.server_search = server_search
        self.entry = entry
        self.base_url = (base_url or entry.base_url).rstrip("/")
        self.url = self.base_url + self.path
        self.max_retries = max_retries
        # A URL the user gave (or a loopback one) that refuses the connection is most
        # likely wrong or its server is not running: one quick retry, not the backoff.
        self.refusal_is_final = explicit_url or names_this_machine(self.base_url)
        self.timeout_s = timeout_s
        self.idle_timeout_s = min(idle_timeout_s, timeout_s)
        # A key read from a file often ends in a newline that HTTP headers cannot carry.
        self._api_key = api_key.strip() if api_key else api_key
        self._sleep = sleep
        self._client = client
        self._owns_client = client is None
        # The sockets this provider's connections run on, for `abort` (wire.Client tells).
        self._sockets: weakref.WeakSet[socket.socket] = weakref.WeakSet()

    # Protocol hooks.
    def auth_headers(self, api_key: str | None) -> dict[str, str]:
        raise NotImplementedError

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        raise NotImplementedError

    def new_parser(self) -> StreamParser:
        raise NotImplementedError

    def request_headers(self, body: dict[str, Any]) -> dict[str, str]:
        """Headers this request's body needs (a beta feature it uses); none by default."""
        return {}

    def close(self) -> None:
        if self._owns_client and self._client is not None:
            self._client.close()
            self._client = None

    def abort(self) -> None:
        """From any thread: shut down this provider's connections, which ends a read
        blocked on one (a stalled stream, a reply not yet begun) at once; the thread
        reading it sees a broken connection. The next request opens a new one."""
        for sock in list(self._sockets):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def _keep_socket(self, sock: socket.socket) -> None:
        """Each new connection's socket, for `abort`."""
        self._sockets.add(sock)

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        body = self.build_body(request) | self.entry.extra_body | request.extra_body
        retries = 0
        while True:
            retry = yield from self._attempt(request, body)
            if retry is None:
                return
            quick = retry.refused and self.refusal_is_final
            if retries >= (min(self.max_retries, 1) if quick else self.max_retries):
                raise self._give_up(retry, retries + 1)
            retries += 1
            delay = retry_delay(retries, retry.headers)  # the first retry's: 1 s
            yield Retrying(retries, delay, retry.reason, discarded=retry.partial)
            self._sleep(delay)

    def _give_up(self, retry: _Retry, attempts: int) -> ProviderError:
        tried = f"gave up after {attempts} attempts: " if attempts > 1 else ""
        if retry.refused and self.refusal_is_final:  # the URL says it all, not "custom"
            return self._error(
                f"{tried}{retry.reason} (is its server running, and the base URL right?)"
            )
        return self._error(
            f"{self.name}: {tried}{retry.reason}", status=retry.status, partial=retry.partial
        )

    def _attempt(
        self, request: ModelRequest, body: dict[str, Any]
    ) -> Generator[StreamEvent, None, _Retry | None]:
        parser = self.new_parser()
        bound = OutputBound.of(body, request)
        started = False
        headers: Mapping[str, str] = {}
        try:
            data = inbound.utf8(json.dumps(body, ensure_ascii=False, separators=(",", ":")))
            headers = {**self._headers(), **self.request_headers(body)}
            with self._http().stream("POST", self.url, data, headers) as resp:
                if resp.status_code >= 400:
                    return self._http_failure(resp, request.model, has_images(request))
                headers = resp.headers
                self._refuse_whole_json(resp)
                for count, sse in enumerate(iter_sse(resp.iter_lines()), 1):
                    for event in read_event(parser, sse):
                        started = True
                        yield event
                    if parser.done:
                        break
                    if bound.reached(parser.draft, count):
                        parser.draft.stop_reason = "max_tokens"  # read as the limit's stop
                        break
                if not (parser.done or parser.draft.stop_reason):
                    raise StreamFailure(
                        "the stream ended before the reply was complete", retryable=True
                    )
        except wire.BadURL as exc:
            raise self._error(f"{self.name}: bad base URL {self.base_url!r}: {exc}") from None
        except wire.BadHeader:
            # The exception's own text would quote the offending header: the key.
            raise self._error(
                f"{self.name}: the API key or a configured header holds characters HTTP "
                f"headers cannot carry; check {self._key_hint()}"
            ) from None
        except (wire.WireError, StreamFailure) as exc:
            reason, retryable = self._describe(exc)
            # No tool call of a reply runs before the reply is complete, so a reply that
            # broke off is safe to ask for again; the retry replaces what it streamed.
            partial = parser.draft.partial() if started else None
            if partial is not None:
                reason = f"the reply broke off mid-stream: {reason}"
            if not retryable:
                raise self._error(f"{self.name}: {reason}", partial=partial) from None
            refused = isinstance(exc, wire.ConnectFailed) and not started
            return _Retry(reason, headers=headers, partial=partial, refused=refused)
        yield Completed(parser.draft.response(request.model, self.stop_aliases))
        return None

    def _http_failure(self, response: wire.Response, model: str, images: bool) -> _Retry:
        response.read()
        status = response.status_code
        detail = error_detail(response)
        if images and refuses_images(detail):
            raise self._error(
                f"model {model!r} does not take images: {self.name} answered HTTP {status} "
                f"{detail}; switch to a model that sees images, or send none",
                status=status,
                images_refused=True,
            )
        if status in (401, 403):
            raise self._error(
                f"{self.name} rejected the API key (HTTP {status}): check {self._key_hint()} "
                f"({detail})",
                status=status,
            )
        if status == 404:
            raise self._error(
                f"{self.name}: HTTP 404 {detail}: check the model ID {model!r} and the base URL "
                f"{self.base_url}",
                status=status,
            )
        if is_retryable_status(status):
            return _Retry(f"HTTP {status} {detail}", status, response.headers)
        raise self._error(f"{self.name}: HTTP {status} {detail}", status=status)

    def _refuse_whole_json(self, response: wire.Response) -> None:
        if response.headers.get("content-type", "").startswith("application/json"):
            body = shorten(response.read().decode(errors="replace"), CLIP_CHARS)
            raise self._error(
                f"{self.name}: {self.url} answered with JSON instead of an event stream "
                f"(does it support stream=true?): {body}"
            )

    def _key_hint(self) -> str:
        return self.entry.api_key_env or f"the API key configured for provider {self.name!r}"

    def _describe(self, exc: Exception) -> tuple[str, bool]:
        if isinstance(exc, StreamFailure):
            return exc.reason, exc.retryable
        if isinstance(exc, wire.TooLong):
            return str(exc), False
        timed_out = isinstance(exc, wire.TimedOut)
        if timed_out and exc.reading and self.idle_timeout_s < self.timeout_s:
            idle = self.idle_timeout_s
            return f"no response from {self.url} within {idle:g}s (streamIdleTimeout)", True
        if timed_out:
            return f"no response from {self.url} within {self.timeout_s:g}s", True
        if isinstance(exc, wire.ConnectFailed):
            return f"could not connect to {self.url}: {exc}", True
        return f"the connection to {self.url} failed: {str(exc) or type(exc).__name__}", True

    def _error(
        self,
        message: str,
        *,
        status: int | None = None,
        partial: Message | None = None,
        images_refused: bool = False,
    ) -> ProviderError:
        if self._api_key and len(self._api_key) >= 4:
            message = message.replace(self._api_key, "***")
        return ProviderError(message, status=status, partial=partial, images_refused=images_refused)

    def _headers(self) -> dict[str, str]:
        return {
            "accept": "text/event-stream",
            "content-type": "application/json",
            "user-agent": f"caretz/{__version__}",
            **self.auth_headers(self._api_key),
            **self.entry.headers,
        }

    def _http(self) -> wire.Client:
        if self._client is None:
            # The read timeout is the stream's idle timeout: it bounds every wait for
            # bytes, so a server that sends nothing (no byte, no keep-alive) for that long
            # is given up.
            self._client = wire.Client(
                connect_s=min(self.timeout_s, 30.0),
                read_s=self.idle_timeout_s,
                on_socket=self._keep_socket,
            )
        return self._client


names_this_machine = wire.names_this_machine
