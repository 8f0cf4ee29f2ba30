"""A real OTLP/HTTP collector on loopback for the telemetry tests: it takes the SDK
exporter's POSTs to /v1/traces and /v1/metrics and decodes their protobuf bodies with
opentelemetry-proto's messages, as a collector does."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue


def value_of(any_value: AnyValue) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [value_of(each) for each in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


def attributes(pairs: Any) -> dict[str, Any]:
    return {pair.key: value_of(pair.value) for pair in pairs if isinstance(pair, KeyValue)}


@dataclass
class Span:
    name: str
    span_id: bytes
    parent_id: bytes
    trace_id: bytes
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    status_code: int
    resource: dict[str, Any]


@dataclass
class Point:
    metric: str
    value: float
    attributes: dict[str, Any]


@dataclass
class Collector:
    """What the collector received, decoded; `url` is its base (OTEL_EXPORTER_OTLP_ENDPOINT)."""

    url: str = ""
    spans: list[Span] = field(default_factory=list)
    metrics: list[ExportMetricsServiceRequest] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)  # each request's

    def receive(self, path: str, body: bytes) -> None:
        self.paths.append(path)
        if path == "/v1/traces":
            request = ExportTraceServiceRequest.FromString(body)
            for resource_spans in request.resource_spans:
                resource = attributes(resource_spans.resource.attributes)
                for scope in resource_spans.scope_spans:
                    self.spans += [as_span(span, resource) for span in scope.spans]
        elif path == "/v1/metrics":
            self.metrics.append(ExportMetricsServiceRequest.FromString(body))

    def points(self, name: str) -> list[Point]:
        """The last export's data points of metric `name` (cumulative sums and histograms)."""
        found: list[Point] = []
        for request in self.metrics[-1:]:
            for metric in each_metric(request):
                if metric.name != name:
                    continue
                kind = metric.WhichOneof("data")
                for point in getattr(metric, kind).data_points:
                    value = point.sum if kind == "histogram" else point.as_int or point.as_double
                    found.append(Point(name, value, attributes(point.attributes)))
        return found

    def total(self, name: str, **where: Any) -> float:
        return sum(
            p.value
            for p in self.points(name)
            if all(p.attributes.get(k) == v for k, v in where.items())
        )

    def named(self, name: str) -> list[Span]:
        return [span for span in self.spans if span.name == name]

    def children(self, parent: Span) -> list[Span]:
        return [span for span in self.spans if span.parent_id == parent.span_id]


def each_metric(request: ExportMetricsServiceRequest) -> Iterator[Any]:
    for resource_metrics in request.resource_metrics:
        for scope in resource_metrics.scope_metrics:
            yield from scope.metrics


def as_span(span: Any, resource: dict[str, Any]) -> Span:
    return Span(
        name=span.name,
        span_id=span.span_id,
        parent_id=span.parent_span_id,
        trace_id=span.trace_id,
        start_ns=span.start_time_unix_nano,
        end_ns=span.end_time_unix_nano,
        attributes=attributes(span.attributes),
        events=[(event.name, attributes(event.attributes)) for event in span.events],
        status_code=span.status.code,
        resource=resource,
    )


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with self.server.lock:
            self.server.collector.headers.append(dict(self.headers.items()))
            self.server.collector.receive(self.path, body)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, collector: Collector):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.collector = collector
        self.lock = threading.Lock()


def start_collector() -> tuple[Collector, _Server]:
    collector = Collector()
    server = _Server(collector)
    collector.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    ).start()
    return collector, server
