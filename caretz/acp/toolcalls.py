"""A caretz tool call as the editor sees it: its kind, title, the files it touches, and
what it returned (a diff for an edit, the output for the rest)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from acp.schema import (
    ContentToolCallContent,
    FileEditToolCallContent,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolKind,
)

from caretz.messages import ToolCall
from caretz.session.records.loop import ToolCalled, ToolReturned
from caretz.text import one_line
from caretz.tools.asking import input_summary

Content = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent
TITLE_CHARS = 120
OUTPUT_CHARS = 20_000  # of a result shown in the editor (the model's copy is whole)
_KINDS: dict[str, ToolKind] = {
    "bash": "execute",
    "job_stop": "execute",
    "read": "read",
    "job_output": "read",
    "write": "edit",
    "edit": "edit",
    "multi_edit": "edit",
    "grep": "search",
    "glob": "search",
    "todo": "think",
}
_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def tool_kind(tool: str) -> ToolKind:
    return _KINDS.get(tool, "other")


def title(tool: str, arguments: Mapping[str, Any]) -> str:
    """What the call does, on one line: `Edit src/app.py`, `pytest -q`."""
    path = arguments.get("path")
    pattern = arguments.get("pattern")
    if tool == "bash":
        text = arguments.get("command") or ""
    elif tool in ("read", "write", "edit", "multi_edit") and isinstance(path, str):
        text = f"{'Edit' if tool == 'multi_edit' else tool.capitalize()} {path}"
    elif tool in ("grep", "glob") and isinstance(pattern, str):
        text = f"{tool} {pattern}" + (f" in {path}" if isinstance(path, str) and path else "")
    elif tool == "todo":
        text = "Update the plan"
    elif tool == "task":
        text = f"Subagent {arguments.get('agent') or ''}".strip()
    else:
        text = f"{tool}: {input_summary(tool, arguments)}"
    return one_line(str(text), TITLE_CHARS) or tool


def locations(tool: str, arguments: Mapping[str, Any], workspace: Path) -> list[ToolCallLocation]:
    """The file a file tool reads or changes, as an absolute path (with the first line read)."""
    path = arguments.get("path")
    if tool not in ("read", "write", "edit", "multi_edit") or not isinstance(path, str):
        return []
    offset = arguments.get("offset")
    line = offset if tool == "read" and isinstance(offset, int) and offset > 0 else None
    return [ToolCallLocation(path=absolute(path, workspace), line=line)]


def absolute(path: str, workspace: Path) -> str:
    return os.path.normpath(os.path.join(workspace, os.path.expanduser(path)))


def logged_call(event: ToolCalled) -> ToolCall:
    """The call a log's record names (arguments that are no object count as none)."""
    arguments = event.call.get("arguments")
    return ToolCall(
        id=str(event.call.get("id", "")),
        name=str(event.call.get("name", "")),
        arguments=dict(arguments) if isinstance(arguments, Mapping) else {},
    )


def started(call: ToolCall, workspace: Path) -> ToolCallStart:
    return ToolCallStart(
        session_update="tool_call",
        tool_call_id=call.id,
        title=title(call.name, call.arguments),
        kind=tool_kind(call.name),
        status="in_progress",
        locations=locations(call.name, call.arguments, workspace) or None,
        raw_input=dict(call.arguments),
    )


def finished(call: ToolCall | None, result: ToolReturned, workspace: Path) -> ToolCallProgress:
    """The call's end: completed or failed, with a diff for a change and the output."""
    arguments = call.arguments if call is not None else {}
    diffs = result_diffs(result, arguments, workspace) if result.ok else []
    content: list[Content] = list(diffs)
    if not diffs or not result.ok:
        content += _output(result)
    raw: dict[str, Any] = {"ok": result.ok}
    if result.exit_code is not None:
        raw["exit_code"] = result.exit_code
    if result.ended_by:
        raw["ended_by"] = result.ended_by
    return ToolCallProgress(
        session_update="tool_call_update",
        tool_call_id=result.call_id,
        status="completed" if result.ok else "failed",
        content=content or None,
        raw_output=raw,
    )


def result_diffs(
    result: ToolReturned, arguments: Mapping[str, Any], workspace: Path
) -> list[FileEditToolCallContent]:
    """An edit's hunks as diffs; a new file's whole text (its write has no diff)."""
    if result.diff:
        return diff_hunks(result.diff, workspace)
    content, path = arguments.get("content"), arguments.get("path")
    if result.name == "write" and isinstance(content, str) and isinstance(path, str):
        return [
            FileEditToolCallContent(type="diff", path=absolute(path, workspace), new_text=content)
        ]
    return []


def diff_hunks(diff: str, workspace: Path) -> list[FileEditToolCallContent]:
    """A unified diff (`--- a/x`, `+++ b/x`, hunks) as one old/new pair per hunk."""
    blocks: list[FileEditToolCallContent] = []
    path = ""
    lines = iter(diff.splitlines(keepends=True))
    for line in lines:
        if line.startswith("+++ "):
            name = line[4:].rstrip("\n")
            path = absolute(name[2:] if name.startswith("b/") else name, workspace)
            continue
        hunk = _HUNK.match(line)
        if hunk is None or not path:
            continue
        old_left, new_left = int(hunk.group(1) or 1), int(hunk.group(2) or 1)
        old: list[str] = []
        new: list[str] = []
        while old_left > 0 or new_left > 0:
            body = next(lines, None)
            if body is None:
                break
            mark, text = body[:1], body[1:]
            if mark in (" ", "-"):
                old.append(text)
                old_left -= 1
            if mark in (" ", "+"):
                new.append(text)
                new_left -= 1
        blocks.append(
            FileEditToolCallContent(
                type="diff", path=path, old_text="".join(old), new_text="".join(new)
            )
        )
    return blocks


def _output(result: ToolReturned) -> list[Content]:
    whole = text = result.output or ""
    if not text.strip():
        return []
    if len(text) > OUTPUT_CHARS:
        text = text[:OUTPUT_CHARS] + f"\n[… {len(whole) - OUTPUT_CHARS} more characters]"
    if result.name == "bash":
        fence = "```"
        while fence in text:
            fence += "`"
        text = f"{fence}\n{text.rstrip()}\n{fence}"
    block = TextContentBlock(type="text", text=text)
    return [ContentToolCallContent(type="content", content=block)]
