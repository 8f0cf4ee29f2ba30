"""Whether and how a session exports: the profile's switch or CARETZ_ENABLE_TELEMETRY, the
standard variables, and the refusals said before anything is sent."""

from __future__ import annotations

import pytest

from caretz.config_base import ConfigError
from caretz.telemetry.settings import telemetry_options


def test_the_standard_variables_say_where_and_what():
    options = telemetry_options(
        False,
        False,
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/",
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://metrics:9090/otlp",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_LOG_USER_PROMPTS": "1",
            "CARETZ_OTEL_SHUTDOWN_TIMEOUT_MS": "750",
            "TRACEPARENT": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        },
    )

    assert options is not None
    assert options.traces_url == "http://collector:4318/v1/traces"
    assert options.metrics_url == "http://metrics:9090/otlp"  # a signal's own URL as it is
    assert options.log_user_prompts and not options.log_tool_details
    assert options.shutdown_timeout_s == 0.75
    assert options.traceparent.startswith("00-0af7")


def test_the_profile_opts_in_as_the_variables_do():
    options = telemetry_options(True, True, {})

    assert options is not None and options.log_user_prompts and options.log_tool_details
    assert options.traces_url == "http://localhost:4318/v1/traces"


@pytest.mark.parametrize(
    "env",
    [
        {"OTEL_SDK_DISABLED": "true"},
        {"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"},
    ],
)
def test_the_sdks_own_switches_turn_it_off(env):
    assert telemetry_options(True, False, env) is None


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc"),
        ({"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"}, "_TRACES_PROTOCOL=http/json"),
        ({"OTEL_METRICS_EXPORTER": "prometheus"}, "OTEL_METRICS_EXPORTER=prometheus"),
        ({"CARETZ_OTEL_SHUTDOWN_TIMEOUT_MS": "2s"}, "CARETZ_OTEL_SHUTDOWN_TIMEOUT_MS=2s"),
    ],
)
def test_what_caretz_cannot_export_with_is_one_line_naming_the_variable(env, named):
    with pytest.raises(ConfigError, match=named):
        telemetry_options(True, False, env)
