"""A headless run's `--output json` read for a harness that grades it (Harbor): the result
object, what the run used in Harbor's context fields (the loop guard's judge in), the
events as an ATIF trajectory, and what the exit code means for the trial.

Plain dicts only: Harbor's own models validate them in `harbor.py`, so this module runs
(and is tested) wherever caretz does, without Harbor.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from caretz import inbound
from caretz.session.records.guard import (
    LoopGuardCut,
    LoopGuardJudged,
    LoopGuardRedirected,
    LoopGuardStopped,
)
from caretz.session.records.loop import ModelReplied, ToolReturned, TurnStarted

ATIF_VERSION = "ATIF-v1.6"
# The exit codes of a run that ended on its own terms (README's table): the answer, a loop-
# guard stop (or a looping reply cut off), a limit (the output limit's too), a goal judged
# impossible. Each is a finished trial for the verifier to grade.
GRADED_EXITS = {0: "done", 3: "loop_guard", 4: "limit", 5: "impossible"}
# caretz's own words for a key that is missing or that the provider refused (exit 2).
_AUTH_FAILURE = re.compile(
    r"missing API key for provider|rejected the API key|, needs [A-Z0-9_]+: set it"
)
_UNKNOWN_MODEL = re.compile(r"HTTP 404 .*check the model ID")


@dataclass
class RunOutput:
    """What `caretz -p … --output json` printed: its events in order and its result
    object (None when it printed none: it crashed, or was killed)."""

    events: list[dict[str, Any]] = field(default_factory=list)
    result: dict[str, Any] | None = None


def read_output(lines: Iterable[str]) -> RunOutput:
    """The events and the result object from the run's stdout lines; a line that is not
    a JSON object (a torn last line) is passed over."""
    output = RunOutput()
    for line in lines:
        try:
            item = inbound.load_json(line, "a line of the run's output")
        except inbound.BadInput:
            continue
        if not isinstance(item, dict):
            continue
        if item.get("type") == "result":
            output.result = item
        else:
            output.events.append(item)
    return output


def failure(exit_code: int, result: Mapping[str, Any] | None) -> str | None:
    """None for a run the verifier should grade; else why it failed: "auth" (a key
    missing or refused), "model" (a model the provider does not know), "error"."""
    if exit_code in GRADED_EXITS and result is not None:
        return None
    message = str((result or {}).get("message", ""))
    if exit_code == 2 and _AUTH_FAILURE.search(message):
        return "auth"
    if exit_code == 2 and _UNKNOWN_MODEL.search(message):
        return "model"
    return "error"


def context_fields(result: Mapping[str, Any]) -> dict[str, Any]:
    """Harbor's `AgentContext` fields from the result object: tokens (input counts the
    cache's reads and writes, as Harbor's does), cost, each model's share, and caretz's
    status, guard verdicts and the judge's part in the metadata. The judge is counted in
    the totals and under its own model."""
    usage = result.get("usage") or {}
    judge = usage.get("judge") or {}
    return {
        "n_input_tokens": _input_tokens(usage),
        "n_cache_tokens": int(usage.get("cache_read_tokens", 0)),
        "n_output_tokens": int(usage.get("output_tokens", 0)),
        "cost_usd": result.get("cost_usd"),
        "model_usage": _model_usage(result),
        "metadata": {
            "caretz": {
                "session_id": result.get("session_id"),
                "status": result.get("status"),
                "exit_code": result.get("exit_code"),
                "message": result.get("message", ""),
                "tool_calls": result.get("tool_calls", 0),
                "duration_s": result.get("duration_s"),
                "judge": {**judge, "cost_usd": result.get("judge_cost_usd")},
                "guard_verdicts": list(result.get("guard_verdicts") or []),
                "permission_denials": list(result.get("permission_denials") or []),
            }
        },
    }


def _input_tokens(usage: Mapping[str, Any]) -> int:
    return sum(
        int(usage.get(name, 0))
        for name in ("input_tokens", "cache_read_tokens", "cache_write_tokens")
    )


def _model_usage(result: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    usage = result.get("usage") or {}
    models: dict[str, dict[str, Any]] = {}
    for share in (usage.get("agents") or {}).values():
        _add_model(models, str(share.get("model", "")), share, share.get("cost_usd"))
    judge = usage.get("judge") or {}
    if any(judge.values()):
        judges = [v.get("model") for v in result.get("guard_verdicts") or [] if v.get("model")]
        name = judges[0] if judges else "loop-guard-judge"
        _add_model(models, name, judge, result.get("judge_cost_usd"))
    return models


def _add_model(
    models: dict[str, dict[str, Any]], name: str, tokens: Mapping[str, Any], cost: Any
) -> None:
    entry = models.setdefault(
        name, {"n_input_tokens": 0, "n_cache_tokens": 0, "n_output_tokens": 0, "cost_usd": 0.0}
    )
    entry["n_input_tokens"] += _input_tokens(tokens)
    entry["n_cache_tokens"] += int(tokens.get("cache_read_tokens", 0))
    entry["n_output_tokens"] += int(tokens.get("output_tokens", 0))
    entry["cost_usd"] = (
        None if cost is None or entry["cost_usd"] is None else entry["cost_usd"] + cost
    )


def trajectory(output: RunOutput, agent_version: str, model: str | None) -> dict[str, Any]:
    """The run as an ATIF trajectory: the prompt, each model reply with its tool calls
    and their results, the loop guard's notes and stops as system steps; the final
    metrics are the result object's, the judge's calls in (and apart, under `extra`)."""
    steps: list[dict[str, Any]] = []
    by_call: dict[str, dict[str, Any]] = {}
    for event in output.events:
        step = _step(event, by_call)
        if step is not None:
            step["step_id"] = len(steps) + 1
            steps.append(step)
    result = output.result or {}
    usage = result.get("usage") or {}
    document: dict[str, Any] = {
        "schema_version": ATIF_VERSION,
        "session_id": result.get("session_id") or _session_id(output.events),
        "agent": {"name": "caretz", "version": agent_version, "model_name": model},
        "steps": steps,
        "final_metrics": {
            "total_prompt_tokens": _input_tokens(usage),
            "total_completion_tokens": int(usage.get("output_tokens", 0)),
            "total_cached_tokens": int(usage.get("cache_read_tokens", 0)),
            "total_cost_usd": result.get("cost_usd"),
            "total_steps": len(steps),
            "extra": {
                "judge": {**(usage.get("judge") or {}), "cost_usd": result.get("judge_cost_usd")},
                "status": result.get("status"),
                "exit_code": result.get("exit_code"),
            },
        },
    }
    return document


def _step(event: Mapping[str, Any], by_call: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    kind = event.get("type")
    when = _timestamp(event.get("ts"))
    if kind == TurnStarted.TYPE:
        return {"timestamp": when, "source": "user", "message": str(event.get("prompt", ""))}
    if kind == ModelReplied.TYPE:
        return _agent_step(event, when, by_call)
    if kind == ToolReturned.TYPE:
        _observe(event, by_call)
        return None
    if kind == LoopGuardJudged.TYPE:
        return _judged(when, event)
    if kind == LoopGuardRedirected.TYPE:
        return _system(when, str(event.get("note") or event.get("headline", "")), event)
    if kind in (LoopGuardStopped.TYPE, LoopGuardCut.TYPE):
        return _system(when, str(event.get("notice") or event.get("headline", "")), event)
    return None


def _agent_step(
    event: Mapping[str, Any], when: str | None, by_call: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    message = event.get("message") or {}
    usage = event.get("usage") or {}
    step: dict[str, Any] = {
        "timestamp": when,
        "source": "agent",
        "model_name": event.get("model") or None,
        "message": _text(message.get("content")),
        "metrics": {
            "prompt_tokens": _input_tokens(usage),
            "completion_tokens": int(usage.get("output_tokens", 0)),
            "cached_tokens": int(usage.get("cache_read_tokens", 0)),
            "cost_usd": event.get("cost_usd"),
        },
    }
    if message.get("thinking"):
        step["reasoning_content"] = str(message["thinking"])
    calls = message.get("tool_calls") or []
    if calls:
        step["tool_calls"] = [
            {
                "tool_call_id": str(call.get("id", "")),
                "function_name": str(call.get("name", "")),
                "arguments": call.get("arguments") or {},
            }
            for call in calls
        ]
        step["observation"] = {"results": []}
        for call in calls:
            by_call[str(call.get("id", ""))] = step
    if event.get("agent") not in (None, "main"):
        step["extra"] = {"agent": event.get("agent")}
    return step


def _observe(event: Mapping[str, Any], by_call: dict[str, dict[str, Any]]) -> None:
    step = by_call.get(str(event.get("call_id", "")))
    if step is None:
        return
    extra = {"ok": event.get("ok"), "exit_code": event.get("exit_code")}
    step["observation"]["results"].append(
        {
            "source_call_id": str(event.get("call_id")),
            "content": str(event.get("output", "")),
            "extra": extra,
        }
    )


def _system(when: str | None, text: str, event: Mapping[str, Any]) -> dict[str, Any]:
    extra = {"loop_guard": event.get("type"), "headline": event.get("headline", "")}
    return {"timestamp": when, "source": "system", "message": text, "extra": extra}


def _judged(when: str | None, event: Mapping[str, Any]) -> dict[str, Any]:
    """The judge's call as a system step: what it said and what the guard did; its
    tokens under `extra` (they are in the final metrics, not an agent step's)."""
    verdict = event.get("verdict") or {}
    said = "stuck" if verdict.get("stuck") else "not stuck"
    if event.get("error"):
        said = f"no verdict ({event['error']})"
    text = f"[loop guard] {event.get('headline', '')}: {said} → {event.get('action', '')}"
    extra = {
        "loop_guard": event.get("type"),
        "model": event.get("model"),
        "verdict": verdict,
        "usage": event.get("usage") or {},
    }
    return {"timestamp": when, "source": "system", "message": text, "extra": extra}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _timestamp(ts: Any) -> str | None:
    if not isinstance(ts, int | float):
        return None
    return datetime.fromtimestamp(ts, UTC).isoformat()


def _session_id(events: list[dict[str, Any]]) -> str | None:
    return next((str(e["session_id"]) for e in events if e.get("session_id")), None)
