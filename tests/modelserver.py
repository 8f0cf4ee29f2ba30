"""A loopback model server that speaks Anthropic Messages, OpenAI Chat Completions and
OpenAI Responses.

It answers with scripted replies, streamed as SSE the way the real APIs stream them,
and records every request it gets::

    with ModelServer() as server:
        server.add(tool("bash", command="pytest"), text("All green."))
        ...  # point the code under test at server.url (Anthropic) or server.openai_url
        assert server.requests[0].tool_names == ["bash", "read"]

Routes: POST /v1/messages (Anthropic), POST /v1/chat/completions (OpenAI), POST
/v1/responses (OpenAI Responses), GET /v1/models, GET /health. A request takes the next reply queued for its body's "model", else the next
in the shared queue, else asks the `on(...)` responders; with nothing left it gets HTTP 500
"model server: no scripted reply left for model X" (with retry-after: 0, so retries are
instant and the test fails fast).

Tool-call ids are "call_1", "call_2", … numbered across the server's life, so every id
in a conversation is unique, as with the real APIs.

Standalone (benchmarks): `python -m tests.modelserver --script replies.json` prints its
URL on stdout and replays the JSON list of Reply objects in a loop until stopped.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import signal
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, fields
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal

from tests import server_search

WireProtocol = Literal["anthropic", "openai", "responses"]


@dataclass
class Reply:
    text: str = ""
    tool_calls: Sequence[tuple[str, dict[str, Any]]] = ()  # (name, args)
    thinking: str = ""
    # input, output, cache_read (and optionally cache_write) tokens.
    usage: tuple[int, ...] = (100, 20, 0)
    status: int = 200  # non-200: an error reply, JSON error body in the protocol's shape
    error_message: str = "scripted error"
    error_code: str | None = None  # OpenAI's error `code` (e.g. "context_length_exceeded")
    headers: dict[str, str] = field(default_factory=dict)  # sent with the reply
    # Sent verbatim as the first tool call's arguments (a list: as each call's, in order).
    raw_arguments: str | Sequence[str] | None = None
    drop_after_events: int | None = None  # close the connection after N SSE events
    error_after_events: int | None = None  # send the protocol's error event after N events
    delay_s: float = 0.0  # wait before answering
    # Answer only once this is set (or the server stops): before that, not a byte, not
    # even the status line. A test that never sets it has a server that never answers.
    hold: threading.Event | None = None
    # Send the headers and N SSE events, then nothing (no byte, no keep-alive) until the
    # server stops: a stalled stream, which any idle timeout ends.
    stall_after_events: int | None = None
    chunk_size: int = 7  # text, thinking and argument JSON go out in pieces this long
    stop_reason: str | None = None  # Anthropic's words; None: tool_use with calls, else end_turn
    # Responses: a reasoning item with this encrypted_content (and `thinking` as its summary).
    encrypted_reasoning: str = ""
    error_code: str = "server_error"  # Responses: the code of the `error` event
    error_event: str = "error"  # Responses: "error" or "response.failed" carries it
    # Bytes sent verbatim before SSE event N (a line that is no JSON, say): (N, bytes).
    raw_before_event: tuple[int, bytes] | None = None
    # The reply's first text delta sent again and again, without end, until the client
    # goes away or the server stops: a server that streams text for ever.
    endless_text: bool = False
    # The provider's own web search, run before the text: (query, [(url, title), …]) each.
    # Anthropic: server_tool_use and web_search_tool_result blocks; Responses: a
    # web_search_call item (see server_search.py).
    web_searches: Sequence[tuple[str, Sequence[tuple[str, str]]]] = ()

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Reply:
        """A Reply from JSON: tool_calls as [name, args] pairs or {"name", "arguments"}."""
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown Reply fields {sorted(unknown)}; known: {sorted(known)}")
        values = dict(data)
        values["tool_calls"] = [_call_pair(call) for call in data.get("tool_calls", [])]
        values["web_searches"] = [
            (query, [tuple(hit) for hit in hits]) for query, hits in data.get("web_searches", [])
        ]
        if "usage" in data:
            values["usage"] = tuple(data["usage"])
        return cls(**values)


def _call_pair(call: Any) -> tuple[str, dict[str, Any]]:
    if isinstance(call, dict):
        return call["name"], call.get("arguments", {})
    name, arguments = call
    return name, arguments


def text(s: str, **kw: Any) -> Reply:
    return Reply(text=s, **kw)


def tool(name: str, **args: Any) -> Reply:
    return Reply(tool_calls=[(name, args)])


def calls(*pairs: tuple[str, dict[str, Any]], text: str = "") -> Reply:
    return Reply(text=text, tool_calls=list(pairs))


def error(
    status: int,
    message: str = "scripted error",
    retry_after: float | None = None,
    code: str | None = None,
) -> Reply:
    headers = {} if retry_after is None else {"retry-after": f"{retry_after:g}"}
    return Reply(status=status, error_message=message, headers=headers, error_code=code)


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]  # lower-case names
    body: Any  # parsed JSON (the raw text if it was not JSON)

    @property
    def protocol(self) -> WireProtocol:
        if self.path.endswith("/responses"):
            return "responses"
        return "anthropic" if self.path.endswith("/messages") else "openai"

    @property
    def input(self) -> list[dict[str, Any]]:
        """A Responses request's input items."""
        return self.body.get("input", []) if isinstance(self.body, dict) else []

    @property
    def model(self) -> str | None:
        return self.body.get("model") if isinstance(self.body, dict) else None

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages", []) if isinstance(self.body, dict) else []

    @property
    def system(self) -> str:
        """The system prompt as text, whichever protocol carried it."""
        if self.protocol == "responses":
            return self.body.get("instructions") or ""
        if self.protocol == "openai":
            first = self.messages[0] if self.messages else {}
            is_system = first.get("role") in ("system", "developer")
            return (first.get("content") or "") if is_system else ""
        system = self.body.get("system", "") if isinstance(self.body, dict) else ""
        if isinstance(system, list):
            return "\n\n".join(block.get("text", "") for block in system)
        return system

    @property
    def tool_names(self) -> list[str]:
        tools = self.body.get("tools", []) if isinstance(self.body, dict) else []
        # A provider's own tool may have a type and no name (Responses' web_search).
        return [
            t["function"]["name"] if "function" in t else t.get("name") or t["type"] for t in tools
        ]


Responder = Callable[[RecordedRequest], Reply | None]


class ModelServer:
    """Scripted model endpoints on 127.0.0.1; a context manager (or start()/stop())."""

    def __init__(self, port: int = 0):
        self._port = port
        self._lock = threading.Lock()
        self._queues: dict[str | None, deque[Reply]] = {None: deque()}
        self._responders: list[Responder] = []
        self._ids = itertools.count(1)
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.requests: list[RecordedRequest] = []
        # GET /props answers with this, as llama.cpp's server does (None: 404).
        self.props: dict[str, Any] | None = None
        self.url = ""
        self.openai_url = ""

    def start(self) -> ModelServer:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        self._httpd = _HTTPServer(("127.0.0.1", self._port), _Handler, self)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self.openai_url = self.url + "/v1"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="modelserver",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._lock:
            open_connections = list(self._connections)
        for connection in open_connections:  # wakes handlers waiting on idle keep-alives
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def add(self, *replies: Reply, model: str | None = None) -> None:
        """Queue replies for requests naming `model` (None: the shared queue)."""
        with self._lock:
            self._queues.setdefault(model, deque()).extend(replies)

    def on(self, responder: Responder) -> None:
        """Ask `responder` for a reply when no queue has one (None: ask the next one)."""
        with self._lock:
            self._responders.append(responder)

    def requests_for(self, model: str) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.model == model]

    def pending(self) -> int:
        with self._lock:
            return sum(len(queue) for queue in self._queues.values())

    # Called from handler threads.

    def _take_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            for queue in (self._queues.get(request.model), self._queues[None]):
                if queue:
                    return queue.popleft()
            responders = list(self._responders)
        for responder in responders:
            try:
                reply = responder(request)
            except Exception as exc:  # the test sees it as a failed request
                return _server_error(f"model server: responder failed: {exc!r}")
            if reply is not None:
                return reply
        return _server_error(f"model server: no scripted reply left for model {request.model}")

    def _next_call_id(self) -> str:
        with self._lock:
            return f"call_{next(self._ids)}"

    def _models(self) -> list[str]:
        with self._lock:
            named = {model for model in self._queues if model}
            named.update(r.model for r in self.requests if r.model)
        return sorted(named)

    def _held(self, hold: threading.Event) -> bool:
        """Wait for `hold` or the server's stop; whether `hold` came first."""
        while not hold.wait(0.05):
            if self._stopping.is_set():
                return False
        return True

    def _track(self, connection: socket.socket, alive: bool) -> None:
        with self._lock:
            if alive:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)


def _server_error(message: str) -> Reply:
    return Reply(status=500, error_message=message, headers={"retry-after": "0"})


# --- Wire rendering -----------------------------------------------------------------------

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}
_OPENAI_FINISH = {"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length"}


@dataclass
class _Call:
    id: str
    name: str
    arguments: str  # JSON text as sent


@dataclass
class _Rendered:
    """One reply, resolved: ids chosen, arguments serialized, stop reason decided."""

    reply: Reply
    model: str
    calls: list[_Call]

    @property
    def stop_reason(self) -> str:
        return self.reply.stop_reason or ("tool_use" if self.calls else "end_turn")

    @property
    def usage(self) -> tuple[int, int, int, int]:
        padded = (*self.reply.usage, 0, 0, 0, 0)
        return padded[0], padded[1], padded[2], padded[3]

    def pieces(self, s: str) -> list[str]:
        size = self.reply.chunk_size
        if size <= 0:
            return [s] if s else []
        return [s[i : i + size] for i in range(0, len(s), size)]


def error_body(
    protocol: WireProtocol, status: int, message: str, code: str | None = None
) -> dict[str, Any]:
    fallback = "api_error" if status >= 500 else "invalid_request_error"
    kind = _ERROR_TYPES.get(status, fallback)
    if protocol == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    kind = "server_error" if kind == "api_error" else kind
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def anthropic_events(r: _Rendered) -> list[tuple[str, dict[str, Any]]]:
    inp, out, cache_read, cache_write = r.usage
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_scripted",
            "type": "message",
            "role": "assistant",
            "model": r.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": inp,
                "output_tokens": 1,
                "cache_read_input_tokens": cache_read,
                "cache_creation_input_tokens": cache_write,
            },
        },
    }
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", start),
        ("ping", {"type": "ping"}),
    ]
    for index, (block, deltas) in enumerate(_anthropic_blocks(r)):
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": block},
            )
        )
        for delta in deltas:
            events.append(
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    end = {"stop_reason": r.stop_reason, "stop_sequence": None}
    usage: dict[str, Any] = {"output_tokens": out}
    if r.reply.web_searches:
        usage["server_tool_use"] = {"web_search_requests": len(r.reply.web_searches)}
    events.append(("message_delta", {"type": "message_delta", "delta": end, "usage": usage}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _anthropic_blocks(r: _Rendered) -> Iterator[tuple[dict[str, Any], list[dict[str, Any]]]]:
    reply = r.reply
    if reply.thinking:
        deltas = [{"type": "thinking_delta", "thinking": p} for p in r.pieces(reply.thinking)]
        deltas.append({"type": "signature_delta", "signature": "scripted-signature"})
        yield {"type": "thinking", "thinking": ""}, deltas
    for number, (query, hits) in enumerate(reply.web_searches, start=1):
        yield from server_search.anthropic_blocks(f"srvtoolu_{number}", query, hits, r.pieces)
    if reply.text:
        yield (
            {"type": "text", "text": ""},
            [{"type": "text_delta", "text": p} for p in r.pieces(reply.text)],
        )
    for call in r.calls:
        deltas = [{"type": "input_json_delta", "partial_json": ""}]
        deltas += [
            {"type": "input_json_delta", "partial_json": p} for p in r.pieces(call.arguments)
        ]
        yield {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}, deltas


def anthropic_message(r: _Rendered) -> dict[str, Any]:
    inp, out, cache_read, cache_write = r.usage
    content: list[dict[str, Any]] = []
    if r.reply.thinking:
        content.append(
            {"type": "thinking", "thinking": r.reply.thinking, "signature": "scripted-signature"}
        )
    if r.reply.text:
        content.append({"type": "text", "text": r.reply.text})
    for call in r.calls:
        content.append(
            {
                "type": "tool_use",
                "id": call.id,
                "name": call.name,
                "input": _loads_or_raw(call.arguments),
            }
        )
    return {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "model": r.model,
        "content": content,
        "stop_reason": r.stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": inp,
            "output_tokens": out,
            "cache_read_input_tokens": cache_read,
            "cache_creation_input_tokens": cache_write,
        },
    }


def openai_events(r: _Rendered, include_usage: bool) -> list[dict[str, Any] | str]:
    base = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": r.model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    events: list[dict[str, Any] | str] = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"reasoning_content": p}) for p in r.pieces(r.reply.thinking)]
    events += [chunk({"content": p}) for p in r.pieces(r.reply.text)]
    for index, call in enumerate(r.calls):
        opening = {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        events.append(chunk({"tool_calls": [opening]}))
        for piece in r.pieces(call.arguments):
            events.append(
                chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            )
    events.append(chunk({}, _OPENAI_FINISH.get(r.stop_reason, r.stop_reason)))
    if include_usage:
        events.append({**base, "choices": [], "usage": _openai_usage(r)})
    events.append("[DONE]")
    return events


def openai_completion(r: _Rendered) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": r.reply.text or None}
    if r.reply.thinking:
        message["reasoning_content"] = r.reply.thinking
    if r.calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in r.calls
        ]
    finish = _OPENAI_FINISH.get(r.stop_reason, r.stop_reason)
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": r.model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": _openai_usage(r),
    }


def _openai_usage(r: _Rendered) -> dict[str, Any]:
    inp, out, cache_read, _ = r.usage
    return {
        "prompt_tokens": inp,
        "completion_tokens": out,
        "total_tokens": inp + out,
        "prompt_tokens_details": {"cached_tokens": cache_read},
    }


def responses_events(r: _Rendered) -> list[tuple[str, dict[str, Any]]]:
    """A reply as the Responses API streams it: output items, their deltas, then usage."""
    inp, out, cache_read, _ = r.usage
    response = {"id": "resp_scripted", "object": "response", "model": r.model, "output": []}
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"response": {**response, "status": "in_progress"}})
    ]
    for index, (item, deltas) in enumerate(_responses_items(r)):
        events.append(("response.output_item.added", {"output_index": index, "item": item}))
        events += [(kind, {"output_index": index, **delta}) for kind, delta in deltas]
        response["output"].append(done := _finished_item(item, r, index))
        events.append(("response.output_item.done", {"output_index": index, "item": done}))
    incomplete = r.stop_reason == "max_tokens"
    usage = {
        "input_tokens": inp,
        "input_tokens_details": {"cached_tokens": cache_read},
        "output_tokens": out,
        "output_tokens_details": {"reasoning_tokens": len(r.reply.thinking)},
        "total_tokens": inp + out,
    }
    final = {**response, "status": "incomplete" if incomplete else "completed", "usage": usage}
    if incomplete:
        final["incomplete_details"] = {"reason": "max_output_tokens"}
    events.append(
        ("response.incomplete" if incomplete else "response.completed", {"response": final})
    )
    return [(kind, {"type": kind, **payload}) for kind, payload in events]


def _responses_items(r: _Rendered) -> Iterator[tuple[dict[str, Any], list[tuple[str, dict]]]]:
    reply = r.reply
    if reply.thinking or reply.encrypted_reasoning:
        deltas = [
            ("response.reasoning_summary_text.delta", {"summary_index": 0, "delta": p})
            for p in r.pieces(reply.thinking)
        ]
        yield {"type": "reasoning", "id": "rs_scripted", "summary": []}, deltas
    for number, (query, _hits) in enumerate(reply.web_searches, start=1):
        yield server_search.responses_item(f"ws_{number}", query)
    if reply.text:
        deltas = [
            ("response.output_text.delta", {"content_index": 0, "delta": p})
            for p in r.pieces(reply.text)
        ]
        yield {"type": "message", "id": "msg_scripted", "role": "assistant", "content": []}, deltas
    for call in r.calls:
        deltas = [
            ("response.function_call_arguments.delta", {"delta": p})
            for p in r.pieces(call.arguments)
        ]
        item = {
            "type": "function_call",
            "id": f"fc_{call.id}",
            "call_id": call.id,
            "name": call.name,
            "arguments": "",
        }
        yield item, deltas


def _finished_item(item: dict[str, Any], r: _Rendered, index: int) -> dict[str, Any]:
    if item["type"] == "reasoning":
        summary = [{"type": "summary_text", "text": r.reply.thinking}] if r.reply.thinking else []
        return {**item, "summary": summary, "encrypted_content": r.reply.encrypted_reasoning}
    if item["type"] == "message":
        return {**item, "content": [{"type": "output_text", "text": r.reply.text}]}
    if item["type"] == "web_search_call":
        return server_search.finished_call(item)
    call = next(c for c in r.calls if item["call_id"] == c.id)
    return {**item, "arguments": call.arguments, "status": "completed"}


def _loads_or_raw(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except json.JSONDecodeError:
        return arguments


def _sse(protocol: WireProtocol, event: tuple[str, dict[str, Any]] | dict[str, Any] | str) -> bytes:
    if protocol in ("anthropic", "responses"):
        name, payload = event  # type: ignore[misc]
        return f"event: {name}\ndata: {json.dumps(payload)}\n\n".encode()
    data = event if isinstance(event, str) else json.dumps(event)
    return f"data: {data}\n\n".encode()


def _is_text_delta(protocol: WireProtocol, payload: Any) -> bool:
    if protocol == "anthropic":
        name, data = payload
        return name == "content_block_delta" and data["delta"]["type"] == "text_delta"
    if protocol == "responses":
        return payload[0] == "response.output_text.delta"
    choices = payload.get("choices") if isinstance(payload, dict) else None
    return bool(choices and choices[0]["delta"].get("content"))


def _error_event(
    protocol: WireProtocol, message: str, code: str = "server_error", kind: str = "error"
) -> bytes:
    if protocol == "responses" and kind == "response.failed":
        failed = {"status": "failed", "error": {"code": code, "message": message}}
        return _sse(protocol, (kind, {"type": kind, "response": failed}))
    if protocol == "responses":
        payload = {"type": "error", "code": code, "message": message, "param": None}
        return _sse(protocol, ("error", payload))
    if protocol == "anthropic":
        payload = {"type": "error", "error": {"type": "overloaded_error", "message": message}}
        return _sse(protocol, ("error", payload))
    return _sse(protocol, {"error": {"message": message, "type": "server_error", "code": None}})


# --- HTTP -------------------------------------------------------------------------------------


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[_Handler], owner: ModelServer):
        self.owner = owner
        super().__init__(address, handler)

    # Connections are tracked from accept (in the serving thread) to close, so stop()
    # can reach every one of them.
    def process_request(self, request: Any, client_address: Any) -> None:
        self.owner._track(request, alive=True)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        self.owner._track(request, alive=False)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            super().handle_error(request, client_address)


class _Dropped(Exception):
    """The reply script asked to cut the connection."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 120  # an idle keep-alive connection closes after this
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def setup(self) -> None:
        super().setup()
        # Headers, body and SSE chunks go out as separate small writes; without this,
        # Nagle's algorithm meets delayed ACKs and every reply stalls ~40 ms.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()

    def do_GET(self) -> None:
        path = self.path.split("?")[0].rstrip("/")
        if path == "/health":
            self._send_json(200, {"status": "ok"})
        elif path == "/props" and self.server.owner.props is not None:
            self._send_json(200, self.server.owner.props)
        elif path.endswith("/models"):
            models = self.server.owner._models() or ["scripted-model"]
            data = [
                {"id": m, "object": "model", "type": "model", "display_name": m} for m in models
            ]
            self._send_json(200, {"object": "list", "data": data, "has_more": False})
        else:
            self._send_json(
                404, {"error": {"type": "not_found_error", "message": f"no route {path}"}}
            )

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        path = self.path.split("?")[0].rstrip("/")
        if not path.endswith(("/messages", "/chat/completions", "/responses")):
            self._send_json(
                404, {"error": {"type": "not_found_error", "message": f"no route {path}"}}
            )
            return
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        request = RecordedRequest(path, {k.lower(): v for k, v in self.headers.items()}, body)
        owner = self.server.owner
        reply = owner._take_reply(request)
        if reply.delay_s and owner._stopping.wait(reply.delay_s):
            self.close_connection = True
            return
        if reply.hold is not None and not owner._held(reply.hold):
            self.close_connection = True
            return
        try:
            self._answer(request, reply)
        except _Dropped:
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
        except ConnectionError:  # the client went away (closed its stream early)
            self.close_connection = True

    def _answer(self, request: RecordedRequest, reply: Reply) -> None:
        protocol = request.protocol
        if reply.status != 200:
            body = error_body(protocol, reply.status, reply.error_message, reply.error_code)
            self._send_json(reply.status, body, reply.headers)
            return
        owner = self.server.owner
        rendered = _Rendered(reply, request.model or "scripted-model", [])
        raws = [reply.raw_arguments] if isinstance(reply.raw_arguments, str) else []
        raws = raws or list(reply.raw_arguments or ())
        for index, (name, args) in enumerate(reply.tool_calls):
            raw = raws[index] if index < len(raws) else json.dumps(args)
            rendered.calls.append(_Call(owner._next_call_id(), name, raw))
        body = request.body if isinstance(request.body, dict) else {}
        if not body.get("stream"):
            whole = (
                anthropic_message(rendered)
                if protocol == "anthropic"
                else openai_completion(rendered)
            )
            self._send_json(200, whole, reply.headers)
            return
        if protocol == "anthropic":
            payloads: list[Any] = anthropic_events(rendered)
        elif protocol == "responses":
            payloads = responses_events(rendered)
        else:
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            payloads = openai_events(rendered, include_usage)
        events = [_sse(protocol, e) for e in payloads]
        if reply.endless_text:
            first = next(i for i, e in enumerate(payloads) if _is_text_delta(protocol, e))
            self._stream_without_end(events[:first], events[first])
            return
        self._stream(protocol, events, reply)

    def _stream(self, protocol: WireProtocol, events: list[bytes], reply: Reply) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        for count, event in enumerate(events):
            if reply.raw_before_event is not None and count == reply.raw_before_event[0]:
                self._write_chunk(reply.raw_before_event[1])
            if count == reply.stall_after_events:
                self.wfile.flush()
                self.server.owner._stopping.wait()
                raise _Dropped
            if count == reply.drop_after_events:
                raise _Dropped
            if count == reply.error_after_events:
                self._write_chunk(
                    _error_event(protocol, reply.error_message, reply.error_code, reply.error_event)
                )
                break
            self._write_chunk(event)
        self.wfile.write(b"0\r\n\r\n")

    def _stream_without_end(self, opening: list[bytes], delta: bytes) -> None:
        """`opening`, then `delta` again and again until the client closes the stream (a
        ConnectionError, which ends the request) or the server stops."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for event in opening:
            self._write_chunk(event)
        while not self.server.owner._stopping.is_set():
            self._write_chunk(delta)
        raise _Dropped

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%X\r\n%s\r\n" % (len(data), data))

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status, "Overloaded" if status == 529 else None)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


# --- Standalone ---------------------------------------------------------------------------------


def load_script(path: Path) -> list[Reply]:
    data = json.loads(path.read_text())
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of replies")
    return [Reply.from_dict(item) for item in data]


def looping(replies: list[Reply]) -> Responder:
    """A responder that hands out `replies` in order, round and round."""
    cycle = itertools.cycle(replies)
    lock = threading.Lock()

    def respond(_: RecordedRequest) -> Reply | None:
        with lock:
            return next(cycle, None)

    return respond


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.modelserver",
        description="Serve scripted model replies (Anthropic and OpenAI protocols) on loopback.",
    )
    parser.add_argument(
        "--script", type=Path, required=True, help="JSON list of replies, replayed in a loop"
    )
    parser.add_argument(
        "--port", type=int, default=0, help="port to listen on (default: any free one)"
    )
    args = parser.parse_args(argv)
    try:
        replies = load_script(args.script)
    except (OSError, ValueError, TypeError) as exc:
        print(f"modelserver: cannot use --script {args.script}: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with ModelServer(port=args.port) as server:
        server.on(looping(replies))
        print(server.url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            while not stop.wait(0.5):
                pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
