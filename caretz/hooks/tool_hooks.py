"""PreToolUse and PostToolUse: the tool registry's first before-call check, and an
after-call hook.

PreToolUse runs before the permission check, so the rules judge the input as the hooks
left it. A hook may refuse the call (exit 2, or `permissionDecision: "deny"`), change
its input (`updatedInput`, merged over the input; a key set to null removes it), or
say "allow" or "ask", which the permission check weighs (tools/policy.py's
`PermissionHint`: "allow" is an allow rule for this one call, "ask" asks even where
nothing else would). Hooks run in order, each seeing the input as the one before left
it; the first refusal ends it.

PostToolUse sees a call that succeeded and its result, PostToolUseFailure one that
failed and its error; what either says for the model (exit 2's stderr,
a block's reason, `additionalContext`) is added to the result the model reads.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from caretz.hooks.config import HookEvent
from caretz.hooks.matching import ConfiguredHook, claude_tool_name
from caretz.hooks.output import HookResult
from caretz.hooks.session import SessionHooks, block_text
from caretz.messages import ToolCall
from caretz.text import one_line, shorten
from caretz.tools.base import ToolContext, ToolResult
from caretz.tools.policy import CancelToolCall, EndTurn, PermissionHint, Proceed

# caretz's file tools name their path `path`; Claude Code's name it `file_path` (absolute).
_FILE_TOOLS = ("read", "write", "edit", "multi_edit")
ERROR_CHARS = 10_000  # of a failed call's output, in PostToolUseFailure's `error`
REWRITE_NOTE = "[caretz] A PreToolUse hook changed this call's input; it ran with: {input}"


def tool_input(tool: str, args: dict[str, Any], workspace: Path) -> dict[str, Any]:
    """The input a hook sees: the call's arguments, and `file_path` (absolute) beside a
    file tool's `path`, as Claude Code's hooks expect it."""
    shown = dict(args)
    path = args.get("path")
    if tool in _FILE_TOOLS and isinstance(path, str):
        shown["file_path"] = os.path.normpath(os.path.join(workspace, os.path.expanduser(path)))
    return shown


def merged_input(
    tool: str, args: dict[str, Any], shown: dict[str, Any], updated: dict[str, Any]
) -> dict[str, Any]:
    """`updated` over `args`; a changed `file_path` becomes the file tool's `path`."""
    changes = dict(updated)
    file_path = changes.pop("file_path", None)
    if tool in _FILE_TOOLS and isinstance(file_path, str) and file_path != shown.get("file_path"):
        changes.setdefault("path", file_path)
    merged = {**args, **changes}
    return {key: value for key, value in merged.items() if value is not None}


class PreToolUseCheck:
    """The registry's before-call check that runs the PreToolUse hooks."""

    def __init__(self, hooks: SessionHooks):
        self.hooks = hooks
        self.notes: dict[str, list[str]] = {}  # call id → what the model should read after

    def __call__(self, call: ToolCall, ctx: ToolContext) -> Proceed | None:
        names = (call.name, claude_tool_name(call.name))
        configured = self.hooks.hooks_for("PreToolUse", *names)
        if not configured or not isinstance(call.arguments, dict):
            return None
        args = {key: value for key, value in call.arguments.items() if value is not None}
        original, hint = dict(args), None
        for hook in configured:
            shown = tool_input(call.name, args, Path(ctx.workspace))
            result = self.hooks.run_hook(hook, "PreToolUse", _fields(call, shown), call.name)
            self.refuse_if_blocked(call, hook, result)
            if result.updated_input is not None:
                args = merged_input(call.name, args, shown, result.updated_input)
            hint = _stronger(hint, _hint(hook, result))
            if result.context:
                self.notes.setdefault(call.id, []).append(result.context)
        changed = replace(call, arguments=args) if args != original else None
        if changed is not None:
            self.notes.setdefault(call.id, []).append(REWRITE_NOTE.format(input=_json(args)))
        return Proceed(call=changed, hint=hint) if changed or hint else None

    def refuse_if_blocked(self, call: ToolCall, hook: ConfiguredHook, result: HookResult) -> None:
        if result.stop:
            reason = result.stop_reason or "a PreToolUse hook ended the turn"
            raise EndTurn(f"{reason} (the {call.name} call did not run)")
        if result.outcome == "block":
            said = block_text("PreToolUse", hook, result.reason)
            raise CancelToolCall(f"This {call.name} call was blocked and did not run. {said}")


class PostToolUseHook:
    """The registry's after-call hook: PostToolUse hooks, and the notes PreToolUse left."""

    def __init__(self, hooks: SessionHooks, pre: PreToolUseCheck):
        self.hooks = hooks
        self.pre = pre

    def __call__(self, call: ToolCall, result: ToolResult, ctx: ToolContext) -> None:
        notes = self.pre.notes.pop(call.id, [])
        stop: HookResult | None = None
        names = (call.name, claude_tool_name(call.name))
        event: HookEvent = "PostToolUse" if result.ok else "PostToolUseFailure"
        for hook in self.hooks.hooks_for(event, *names):
            shown = tool_input(call.name, dict(call.arguments), Path(ctx.workspace))
            answer = self.hooks.run_hook(hook, event, _after(call, shown, result), call.name)
            if answer.outcome == "block":
                notes.append(block_text(event, hook, answer.reason))
            if answer.context:
                notes.append(answer.context)
            if answer.stop:
                stop = answer
                break
        if notes:
            result.output = "\n\n".join([result.output, *notes])
        if stop is not None:
            raise EndTurn(stop.stop_reason or f"a {event} hook ended the turn", result)


def _fields(call: ToolCall, shown: dict[str, Any]) -> dict[str, Any]:
    return {"tool_name": claude_tool_name(call.name), "tool_input": shown, "tool_use_id": call.id}


def _after(call: ToolCall, shown: dict[str, Any], result: ToolResult) -> dict[str, Any]:
    """PostToolUse's fields for a call that succeeded, PostToolUseFailure's for one that
    failed (Claude Code's `error` and `is_interrupt`)."""
    if result.ok:
        return {**_fields(call, shown), "tool_response": {**result.to_dict(), "success": True}}
    error = shorten(result.output, ERROR_CHARS)
    interrupted = result.ended_by in ("interrupted", "cancelled")
    return {**_fields(call, shown), "error": error, "is_interrupt": interrupted}


def _hint(hook: ConfiguredHook, result: HookResult) -> PermissionHint | None:
    if result.permission not in ("allow", "ask"):
        return None
    source = f"the PreToolUse hook `{one_line(hook.line, 60)}`"
    return PermissionHint(result.permission, result.reason, source)


def _stronger(old: PermissionHint | None, new: PermissionHint | None) -> PermissionHint | None:
    """A hook's "ask" beats another's "allow"."""
    if old is None or (new is not None and new.decision == "ask" and old.decision == "allow"):
        return new
    return old


def _json(args: dict[str, Any]) -> str:
    return json.dumps(args, ensure_ascii=False)
