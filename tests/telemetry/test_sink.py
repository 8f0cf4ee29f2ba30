"""The sink on a real event log, sending to a real loopback collector: what the user opted
into is sent redacted, subagents running side by side nest under their own calls, and a
caller's trace is joined."""

from __future__ import annotations

import itertools
import json
import logging

from caretz.session.events import EventLog
from caretz.session.records.loop import (
    ModelReplied,
    ModelRequested,
    ToolCalled,
    ToolReturned,
    TurnEnded,
    TurnStarted,
)
from caretz.session.records.session import SessionStarted
from caretz.telemetry.export import Exporters, FailureLog
from caretz.telemetry.settings import telemetry_options
from caretz.telemetry.sink import TelemetrySink, open_sink

KEY = "sk-ant-api03-" + "Q7xv" * 12
CALLER = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def opened_log(collector, **env):
    options = telemetry_options(
        True, True, {"OTEL_EXPORTER_OTLP_ENDPOINT": collector.url, "TRACEPARENT": CALLER, **env}
    )
    assert options is not None
    sink = open_sink(options, {})
    ticks = itertools.count(1_000_000)
    log = EventLog(None, clock=lambda: float(next(ticks)))
    log.subscribe(sink.on_event)
    return log, sink


def task(call_id: str, agent: str) -> ToolCalled:
    arguments = {"agent": agent, "prompt": f"look for {KEY}"}
    return ToolCalled(call={"id": call_id, "name": "task", "arguments": arguments})


def test_side_by_side_subagents_nest_under_their_own_calls_and_opted_in_text_is_redacted(
    collector,
):
    log, sink = opened_log(collector)
    log.emit(SessionStarted(session_id="s-1", model="anthropic/claude-test"))
    log.emit(TurnStarted(prompt=f"deploy with key {KEY}", model="anthropic/claude-test"))
    log.emit(task("call-a", "alpha"))
    log.emit(task("call-b", "beta"))
    # beta's turn starts first, and alpha's model call comes while beta runs.
    log.emit(TurnStarted(agent="beta", prompt="look", from_user=False))
    log.emit(TurnStarted(agent="alpha", prompt="look", from_user=False))
    log.emit(ModelRequested(agent="alpha", model="anthropic/claude-test"))
    log.emit(ModelReplied(agent="alpha", model="claude-test", usage={"input_tokens": 5}))
    for agent, call_id in (("alpha", "call-a"), ("beta", "call-b")):
        log.emit(TurnEnded(agent=agent, status="done"))
        log.emit(ToolReturned(call_id=call_id, name="task", ok=True))
    log.emit(TurnEnded(status="done"))
    sink.close()

    (session,) = collector.named("caretz.session")
    assert session.trace_id.hex() == CALLER.split("-")[1]  # the caller's trace joined
    assert session.parent_id.hex() == CALLER.split("-")[2]
    (turn,) = collector.named("caretz.turn")
    calls = {s.attributes["gen_ai.tool.call.id"]: s for s in collector.children(turn)}
    (alpha,) = collector.children(calls["call-a"])
    (beta,) = collector.children(calls["call-b"])
    assert alpha.name == "caretz.turn alpha" and beta.name == "caretz.turn beta"
    assert [s.name for s in collector.children(alpha)] == ["chat claude-test"]
    # Opted in: the prompt and the arguments are there, the key is not.
    assert turn.attributes["caretz.prompt"].startswith("deploy with key ")
    arguments = json.loads(calls["call-a"].attributes["gen_ai.tool.call.arguments"])
    assert arguments["agent"] == "alpha" and arguments["prompt"].startswith("look for ")
    sent = json.dumps([s.attributes for s in collector.spans])
    assert KEY not in sent and "Q7xvQ7xv" not in sent


def test_a_record_the_sink_cannot_read_ends_its_reading_not_the_run(collector):
    options = telemetry_options(True, False, {"OTEL_EXPORTER_OTLP_ENDPOINT": collector.url})
    warned: list[str] = []
    first = TelemetrySink(Exporters(options), {}, warned.append)
    second = TelemetrySink(Exporters(options), {}, warned.append)  # /clear: opened before
    log = EventLog(None)
    log.subscribe(first.on_event)
    log.emit(TurnStarted(prompt="hi"))
    log.emit(TurnEnded(status="done", usage={"input_tokens": "many"}))  # no count
    log.emit(TurnStarted(prompt="again"))
    first.close()
    second.close()

    assert warned == [
        "telemetry: stopped at an event it could not read (Turn.Ended: ValueError: "
        "invalid literal for int() with base 10: 'many')"
    ]
    sdk = logging.getLogger("opentelemetry")
    assert sdk.propagate and not [h for h in sdk.handlers if isinstance(h, FailureLog)]
