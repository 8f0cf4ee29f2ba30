"""What both wire protocols share: SSE framing, the parser seam, the attempts and their retrying.

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
from typing import TYPE_CHECKING, Any, ClassVar

from caretz import __version__, inbound
from caretz.lazy_dataclass import lazy_dataclass
from caretz.messages import Message, ModelRequest
from caretz.providers import wire
from caretz.providers.base import (
    Completed,
    ProviderError,
    Retrying,
    StreamEvent,
    Waiting,
    has_images,
    refuses_images,
)
from caretz.providers.draft import CLIP_CHARS, MessageDraft, OutputBound
from caretz.providers.retries import (
    DEFAULT_FIRST_BYTE_TIMEOUT_S,
    DEFAULT_IDLE_TIMEOUT_S,
    TIMEOUT_RETRIES,
    FailedAttempt,
    error_detail,
    is_retryable_status,
    retry_delay,
)
from caretz.text import shorten

if TYPE_CHECKING:
    from caretz.providers.entry import ProviderEntry

WAITING_TICK_S = 1.0  # how often a wait for the answer is told (`Waiting`)


# --- SSE framing -------------------------------------------------------------------------


@lazy_dataclass(frozen=True)
class SSEEvent:
    event: str  # "" when the server named none (OpenAI-style streams)
    data: str


def iter_sse(lines: Iterable[str]) -> Iterator[SSEEvent]:
    """Group decoded lines into server-sent events (a blank line ends an event)."""
    event, data = "", list[str]()
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
        first_byte_timeout_s: float = DEFAULT_FIRST_BYTE_TIMEOUT_S,
        explicit_url: bool = False,
        client: wire.Client | None = None,
        server_search: int | None = None,
        clock: Callable[[], float] = time.monotonic,
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
        self.first_byte_timeout_s = min(first_byte_timeout_s, timeout_s)
        self._clock = clock
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
        retries = timeouts = 0
        while True:
            retry = yield from self._attempt(request, body)
            if retry is None:
                return
            quick = retry.refused and self.refusal_is_final
            budget = min(self.max_retries, 1) if quick else self.max_retries
            timeouts += retry.timed_out
            if retries >= budget or timeouts > TIMEOUT_RETRIES:
                raise self._give_up(retry, retries + 1)
            retries += 1
            delay = retry_delay(retries, retry.headers)  # the first retry's: 1 s
            yield Retrying(retries, delay, retry.reason, discarded=retry.partial)
            self._sleep(delay)

    def _give_up(self, retry: FailedAttempt, attempts: int) -> ProviderError:
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
    ) -> Generator[StreamEvent, None, FailedAttempt | None]:
        parser = self.new_parser()
        bound = OutputBound.of(body, request)
        started = False
        headers: Mapping[str, str] = {}
        try:
            data = inbound.utf8(json.dumps(body, ensure_ascii=False, separators=(",", ":")))
            headers = {**self._headers(), **self.request_headers(body)}
            with self._http().exchange("POST", self.url, data, headers) as sent:
                resp = yield from self._answer(sent)
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
            timed_out = isinstance(exc, wire.TimedOut)
            return FailedAttempt(
                reason=reason,
                headers=headers,
                partial=partial,
                refused=refused,
                timed_out=timed_out,
            )
        yield Completed(parser.draft.response(request.model, self.stop_aliases))
        return None

    def _answer(self, sent: wire.Exchange) -> Generator[StreamEvent, None, wire.Response]:
        """The answer's head, `Waiting` told each second until it comes; raises
        wire.TimedOut once firstByteTimeout has passed without it. Each slice ends before
        the limit does, so the last `Waiting` always comes before the timeout."""
        limit = self.first_byte_timeout_s
        tick = min(WAITING_TICK_S, limit / 4)
        started = self._clock()
        while True:
            waited = self._clock() - started
            if waited >= limit:
                raise wire.TimedOut("no answer", reading=False, answering=True)
            response = sent.answer(min(tick, limit - waited))
            if response is not None:
                return response
            yield Waiting(self._clock() - started, limit)

    def _http_failure(self, response: wire.Response, model: str, images: bool) -> FailedAttempt:
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
            return FailedAttempt(
                reason=f"HTTP {status} {detail}", status=status, headers=response.headers
            )
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
        if isinstance(exc, wire.TimedOut) and exc.answering:
            waited = self.first_byte_timeout_s
            return f"no answer from {self.url} within {waited:g}s (firstByteTimeout)", True
        if isinstance(exc, wire.TimedOut) and exc.reading:
            idle = self.idle_timeout_s
            return (
                f"the stream from {self.url} sent nothing for {idle:g}s (streamIdleTimeout)",
                True,
            )
        if isinstance(exc, wire.TimedOut):
            return f"no connection to {self.url} within {min(self.timeout_s, 30.0):g}s", True
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
