"""The SDK's providers and their OTLP/HTTP exporters, owned by one session.

The exporters read the standard OTEL_* variables themselves (endpoint, headers, timeout,
resource). Nothing is global: the providers are the session's, not OpenTelemetry's
process-wide ones, and none shuts down at the interpreter's exit on its own (`close`
does, within its time). A collector that is down or silent never holds or fails a run:
what the SDK logs about it is kept here, and `close` says it in one line at most.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable

from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.metrics import Meter, NoOpMeterProvider
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import SERVICE_NAME, SERVICE_VERSION, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from caretz import __version__
from caretz.telemetry.settings import TelemetryOptions

SERVICE = "caretz"
SDK_LOGGER = "opentelemetry"


class Exporters:
    """A tracer and a meter whose data goes to the collector the variables name."""

    def __init__(self, options: TelemetryOptions):
        self.options = options
        self.failures = FailureLog()
        resource = service_resource()
        self._span_exporter: OTLPSpanExporter | None = None
        self._metric_exporter: OTLPMetricExporter | None = None
        self._meters: MeterProvider | None = None
        self._tracers = TracerProvider(resource=resource, shutdown_on_exit=False)
        if options.traces:
            self._span_exporter = OTLPSpanExporter(endpoint=options.traces_url)
            self._tracers.add_span_processor(BatchSpanProcessor(self._span_exporter))
        self.tracer = self._tracers.get_tracer("caretz", __version__)
        self.meter: Meter = NoOpMeterProvider().get_meter("caretz")
        if options.metrics:
            self._metric_exporter = OTLPMetricExporter(endpoint=options.metrics_url)
            reader = PeriodicExportingMetricReader(self._metric_exporter)
            self._meters = MeterProvider([reader], resource=resource, shutdown_on_exit=False)
            self.meter = self._meters.get_meter("caretz", __version__)

    def caller_context(self) -> Context | None:
        """The trace a caller started (TRACEPARENT), which the session's span joins."""
        if not self.options.traceparent:
            return None
        return TraceContextTextMapPropagator().extract({"traceparent": self.options.traceparent})

    def close(self, warn: Callable[[str], None]) -> None:
        """What is left sent, within the options' time; then one line if anything could
        not be (a collector down or too slow), and nothing more."""
        closing = threading.Thread(target=self._shut_down, name="telemetry-close", daemon=True)
        closing.start()
        closing.join(self.options.shutdown_timeout_s)
        late = closing.is_alive()
        for exporter in (self._span_exporter, self._metric_exporter):
            if late and exporter is not None:
                exporter.shutdown()  # its retries stop waiting
        self.failures.stop()
        where = self.options.traces_url if self.options.traces else self.options.metrics_url
        cause = self.failures.first
        if late:
            seconds = f"{self.options.shutdown_timeout_s:g}s"
            why = f" ({cause})" if cause else ""
            warn(f"telemetry: {where} took none of it within {seconds}{why}; left unsent")
        elif cause is not None:
            warn(f"telemetry: could not send to {where}: {cause}")

    def _shut_down(self) -> None:
        millis = int(self.options.shutdown_timeout_s * 1000)
        self._tracers.shutdown()  # the batch's worker sends what is queued, then stops
        if self._meters is not None:
            self._meters.shutdown(timeout_millis=millis)  # a last collection, sent


def service_resource() -> Resource:
    """The SDK's resource (OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME), named caretz
    unless those name it otherwise."""
    resource = Resource.create({SERVICE_VERSION: __version__})
    named = str(resource.attributes.get(SERVICE_NAME, ""))
    if not named or named.startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: SERVICE}))
    return resource


class FailureLog(logging.Handler):
    """The SDK's own warnings and errors (an export that failed, a retry), kept instead
    of printed: the first is what `close` says."""

    _propagated: bool

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.first: str | None = None  # the first error, else the first warning
        self._error = False
        self._logger = logging.getLogger(SDK_LOGGER)
        # A session opened before this one closes (/clear) still holds the logger: what it
        # was before either of them is what the last one to stop puts back.
        holding = [h for h in self._logger.handlers if isinstance(h, FailureLog)]
        self._propagated = holding[0]._propagated if holding else self._logger.propagate
        self._logger.addHandler(self)
        self._logger.propagate = False

    def emit(self, record: logging.LogRecord) -> None:
        error = record.levelno >= logging.ERROR
        if self.first is None or (error and not self._error):
            self.first, self._error = cause(record.getMessage()), error

    def stop(self) -> None:
        self._logger.removeHandler(self)
        if not any(isinstance(h, FailureLog) for h in self._logger.handlers):
            self._logger.propagate = self._propagated


def cause(message: str) -> str:
    """What went wrong, short: the system's words for a failed connection ("Connection
    refused"), else the SDK's line, cut."""
    found = ERRNO.search(message)
    if found:
        return found.group(1).strip().lower()
    line = " ".join(message.split())
    return line if len(line) <= 160 else line[:159] + "…"


ERRNO = re.compile(r"\[Errno -?\d+\] ([^'\")\]]+)")
