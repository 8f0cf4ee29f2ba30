"""Whether a session exports telemetry, and how: from the user's profile and the process's
environment only; a project's files never turn it on or point it elsewhere (a cloned
repository must not send the user's work to a collector of its choosing).

Where it goes is the standard OTEL_* variables' to say: the endpoints
(OTEL_EXPORTER_OTLP_ENDPOINT, _TRACES_ENDPOINT, _METRICS_ENDPOINT) are read here, from
the session's environment; the SDK's OTLP/HTTP exporter reads the rest itself (_HEADERS,
_TIMEOUT, _COMPRESSION, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES). caretz exports http/protobuf only:
another protocol is a ConfigError at start, before anything is sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from caretz.config_base import ConfigError

PROTOCOL = "http/protobuf"
PROTOCOL_VARIABLES = (
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
)
EXPORTERS = ("otlp", "none")
DEFAULT_ENDPOINT = "http://localhost:4318"
SHUTDOWN_TIMEOUT_MS = 2000  # the most a session's end waits for the collector


def is_true(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True, kw_only=True)
class TelemetryOptions:
    """What the user asked for: which signals, what may be sent beyond counts and names,
    how long the end of a session waits for the collector."""

    traces: bool = True
    metrics: bool = True
    log_user_prompts: bool = False  # the prompt's text on its turn's span
    log_tool_details: bool = False  # a call's arguments, the guard's headlines and reasons
    shutdown_timeout_s: float = SHUTDOWN_TIMEOUT_MS / 1000
    traceparent: str | None = None  # a caller's trace (TRACEPARENT) the session joins
    traces_url: str = f"{DEFAULT_ENDPOINT}/v1/traces"
    metrics_url: str = f"{DEFAULT_ENDPOINT}/v1/metrics"


def telemetry_options(
    log_user_prompts: bool, log_tool_details: bool, env: Mapping[str, str]
) -> TelemetryOptions | None:
    """The options for a session whose profile or CARETZ_ENABLE_TELEMETRY turned telemetry
    on; None when OTEL_SDK_DISABLED is true or no signal is left to export. Raises
    ConfigError for a protocol or exporter caretz does not speak, naming the variable."""
    if is_true(env.get("OTEL_SDK_DISABLED")):
        return None
    for name in PROTOCOL_VARIABLES:
        protocol = env.get(name, "").strip()
        if protocol and protocol != PROTOCOL:
            raise ConfigError(
                f"{name}={protocol}: caretz exports OTLP over {PROTOCOL} only "
                f"(a collector's HTTP port, 4318); set it to {PROTOCOL} or unset it"
            )
    traces, metrics = (
        exporter(env, "OTEL_TRACES_EXPORTER"),
        exporter(env, "OTEL_METRICS_EXPORTER"),
    )
    if not traces and not metrics:
        return None
    return TelemetryOptions(
        traces=traces,
        metrics=metrics,
        log_user_prompts=log_user_prompts or is_true(env.get("OTEL_LOG_USER_PROMPTS")),
        log_tool_details=log_tool_details or is_true(env.get("OTEL_LOG_TOOL_DETAILS")),
        shutdown_timeout_s=shutdown_timeout(env) / 1000,
        traceparent=env.get("TRACEPARENT") or None,
        traces_url=signal_url(env, "TRACES"),
        metrics_url=signal_url(env, "METRICS"),
    )


def signal_url(env: Mapping[str, str], signal: str) -> str:
    """Where a signal goes, as the OTLP exporter specification says: its own variable's
    URL as it is, else the common endpoint with the signal's path."""
    own = env.get(f"OTEL_EXPORTER_OTLP_{signal}_ENDPOINT", "").strip()
    if own:
        return own
    base = env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip() or DEFAULT_ENDPOINT
    return f"{base.rstrip('/')}/v1/{signal.lower()}"


def exporter(env: Mapping[str, str], name: str) -> bool:
    """Whether the signal `name` configures is exported: otlp (the default) or none."""
    value = env.get(name, "").strip().lower() or "otlp"
    if value not in EXPORTERS:
        raise ConfigError(f"{name}={value}: caretz exports with otlp or none")
    return value == "otlp"


def shutdown_timeout(env: Mapping[str, str]) -> int:
    """CARETZ_OTEL_SHUTDOWN_TIMEOUT_MS, in milliseconds (default 2000)."""
    value = env.get("CARETZ_OTEL_SHUTDOWN_TIMEOUT_MS", "").strip()
    if not value:
        return SHUTDOWN_TIMEOUT_MS
    if not value.isascii() or not value.isdigit():
        raise ConfigError(f"CARETZ_OTEL_SHUTDOWN_TIMEOUT_MS={value}: a whole number of ms")
    return int(value)
