"""OpenTelemetry export (docs/telemetry.md): the session's events as traces and metrics.

Off by default. `settings.py` reads whether and how from the user's profile and the
environment; `sink.py` is one more listener on the session's event log, which turns the
records into spans, span events and metric points; `export.py` owns the SDK's providers
and their OTLP/HTTP exporters. Only `caretz/app/assembly.py` loads this package, and only
when telemetry is on, so a run without it imports none of OpenTelemetry.
"""
