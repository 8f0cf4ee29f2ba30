"""edit and multi_edit: exact replacements in one file, read first, written race-free.

multi_edit applies several edits to one file in order, each on the text the ones before
it left, and writes the file only when every one of them applied: all or none.
"""

from __future__ import annotations

from typing import Any

from caretz.messages import ToolSpec
from caretz.tools import file_text
from caretz.tools.base import Param, ToolArgumentError, ToolContext, ToolResult, object_schema
from caretz.tools.edit_match import Applied, EditMiss, apply_edit
from caretz.tools.file_access import load, reports_file_problems, store
from caretz.tools.file_reads import FileReads
from caretz.tools.files import WRITE_MAX_BYTES, encoding_note, plural, unified_diff

_EDIT_PARAMS = {
    "old_string": Param("string", "Exact text to replace.", required=True),
    "new_string": Param("string", "Replacement text.", required=True),
    "replace_all": Param("boolean", "Replace every match instead of exactly one (default false)."),
}


class _FileEditor:
    effect = "edit"  # for the permission check (tools/base.py)

    def __init__(self, reads: FileReads | None = None):
        self.reads = reads

    @reports_file_problems
    def edit(self, ctx: ToolContext, raw: str, edits: list[dict[str, Any]]) -> ToolResult:
        current = load(ctx, raw, write=True, max_bytes=WRITE_MAX_BYTES)
        shown = current.shown
        if current.data is None:
            return _failed(f"File not found: {shown} (use write to create a file)")
        try:
            before, encoding = file_text.decode(current.data)
        except file_text.NotText:
            return _failed(f"{shown} looks like a binary file (it contains NUL bytes); not edited")
        if self.reads is not None:
            refusal = self.reads.refusal(current.checked.real, shown, current.data, "edit")
            if refusal:
                return _failed(refusal)
        text, count, notes = before, 0, []
        for number, each in enumerate(edits, 1):
            try:
                applied: Applied = apply_edit(
                    text,
                    each["old_string"],
                    each["new_string"],
                    bool(each.get("replace_all")),
                    shown,
                )
            except EditMiss as miss:
                where = f"edit {number} of {len(edits)}: " if len(edits) > 1 else ""
                undone = "; no edit was made (all or none)" if len(edits) > 1 else ""
                return _failed(file_text.shown(f"{where}{miss}{undone}"))
            text, count = applied.text, count + applied.count
            if applied.note:
                notes.append(f"edit {number}: {applied.note}" if len(edits) > 1 else applied.note)
        data = file_text.encode(text, encoding, shown)
        store(ctx, current, data)
        if self.reads is not None:
            self.reads.remember(current.checked.real, data)
        output = f"Edited {shown}: {plural(count, 'replacement')}"
        if not encoding.is_plain_utf8:
            notes.append(encoding_note(shown, encoding))
        if notes:
            output += "\n" + "\n".join(f"Note: {note}" for note in notes)
        diff = unified_diff(file_text.shown(before), file_text.shown(text), shown)
        return ToolResult(ok=True, output=file_text.shown(output), files_changed=[shown], diff=diff)


class EditTool(_FileEditor):
    spec = ToolSpec(
        name="edit",
        description=(
            "Replace exact text in a file. old_string must match the file exactly, "
            "including indentation and line breaks, and must match exactly once unless "
            "replace_all is true; if it matches several places, include more surrounding "
            "lines to make it unique. new_string replaces it (may be empty to delete). "
            "Read the file first and copy the text without the line-number prefix."
        ),
        parameters=object_schema(
            path=Param("string", "File to edit.", required=True), **_EDIT_PARAMS
        ),
    )

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return self.edit(ctx, args["path"], [args])


class MultiEditTool(_FileEditor):
    spec = ToolSpec(
        name="multi_edit",
        description=(
            "Several edits to one file in one call, applied in order (each sees the text "
            "the ones before it left), all or none: if any edit does not apply, the file "
            "is not changed. Each edit works as the edit tool does. Read the file first."
        ),
        parameters={
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File to edit."},
                "edits": {
                    "type": "array",
                    "description": "The edits, in order.",
                    "items": object_schema(**_EDIT_PARAMS),
                    "minItems": 1,
                },
            },
            "required": ["path", "edits"],
            "additionalProperties": False,
        },
    )

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        edits = args["edits"]
        if not edits:
            raise ToolArgumentError("edits is empty; give at least one edit")
        for number, each in enumerate(edits, 1):
            _check_edit(number, each)
        return self.edit(ctx, args["path"], edits)


def _check_edit(number: int, each: object) -> None:
    if not isinstance(each, dict):
        raise ToolArgumentError(f"edit {number} must be an object with old_string and new_string")
    for name in ("old_string", "new_string"):
        if not isinstance(each.get(name), str):
            raise ToolArgumentError(f"edit {number} needs {name} as a string")
    unknown = set(each) - set(_EDIT_PARAMS)
    if unknown:
        raise ToolArgumentError(f"edit {number} has unknown keys {sorted(unknown)}")
    if each.get("replace_all") is not None and not isinstance(each["replace_all"], bool):
        raise ToolArgumentError(f"edit {number}: replace_all must be true or false")


def _failed(output: str) -> ToolResult:
    return ToolResult(ok=False, output=output)
