"""What a status line command reads on stdin: the session as JSON, in the shape Claude
Code gives its `statusLine` command (so scripts written for it work unchanged), with
caretz's own keys beside it (`permission_mode`, `loop_guard`).

Claude Code's keys: `hook_event_name`, `session_id`, `transcript_path` (here: the
session's events.jsonl), `cwd`, `model` (`id`, `display_name`), `workspace`
(`current_dir`, `project_dir`), `version`, `output_style`, `cost` (`total_cost_usd`,
`total_duration_ms`, `total_api_duration_ms`, `total_lines_added`,
`total_lines_removed`), `context_window` (`total_input_tokens`, `total_output_tokens`,
`context_window_size`, `used_percentage`, `remaining_percentage`, `current_usage`) and
`exceeds_200k_tokens`. A figure caretz does not keep (lines added, API time) is 0; a
cost no price is known for is null.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from caretz import __version__
from caretz.agent.limits import usage_report
from caretz.checkpoints.project import project_root

if TYPE_CHECKING:
    from caretz.app.session import AppSession

LARGE_CONTEXT = 200_000  # Claude Code's `exceeds_200k_tokens`


def status_input(session: AppSession, context_tokens: int, duration_s: float) -> dict[str, Any]:
    """The JSON a status line command gets; `context_tokens`: the conversation's size now,
    `duration_s`: how long the session has run."""
    agent = session.agent
    used = usage_report(agent.conversation.totals)
    usage = used.usage
    window = session.context_window
    percent = min(100.0, round(100 * context_tokens / window, 1)) if window else 0.0
    workspace = str(session.workspace)
    guard = agent.parts.guard
    return {
        "hook_event_name": "Status",
        "session_id": session.id,
        "transcript_path": str(session.events_path),
        "cwd": workspace,
        "model": {"id": agent.config.model_ref, "display_name": agent.config.model_id},
        "workspace": {
            "current_dir": workspace,
            "project_dir": str(project_root(session.workspace)),
        },
        "version": __version__,
        "output_style": {"name": session.settings.output},
        "cost": {
            "total_cost_usd": used.cost_usd,
            "total_duration_ms": round(duration_s * 1000),
            "total_api_duration_ms": 0,
            "total_lines_added": 0,
            "total_lines_removed": 0,
        },
        "context_window": {
            "total_input_tokens": usage.input_tokens + usage.cache_read_tokens,
            "total_output_tokens": usage.output_tokens,
            "context_window_size": window,
            "used_percentage": percent,
            "remaining_percentage": round(100.0 - percent, 1),
            "current_usage": {
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "cache_creation_input_tokens": usage.cache_write_tokens,
                "cache_read_input_tokens": usage.cache_read_tokens,
            },
        },
        "exceeds_200k_tokens": context_tokens > LARGE_CONTEXT,
        "permission_mode": session.settings.permission_mode,
        "loop_guard": {
            "mode": guard.mode,
            "judge": session.judge.model_ref if guard.mode != "off" else None,
            "judge_calls": used.judge_calls,
        },
    }
