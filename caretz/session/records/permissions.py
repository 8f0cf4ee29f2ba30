"""The permission check's records: a question put to the user, and every decision that
was not a plain "allowed" (a rule's or the mode's refusal, an answer)."""

from __future__ import annotations

from dataclasses import field
from typing import ClassVar

from caretz.session.records.base import PermissionRecord, record


@record
class PermissionAsked(PermissionRecord):
    TYPE: ClassVar[str] = "Permission.Asked"
    call_id: str = ""
    tool: str = ""
    input: str = ""  # the call, summarized
    reason: str = ""
    rule: str | None = None
    escalate: str | None = None
    saves: list[str] = field(default_factory=list)  # the rules "yes, always" would save


@record
class PermissionDecided(PermissionRecord):
    TYPE: ClassVar[str] = "Permission.Decided"
    call_id: str = ""
    tool: str = ""
    input: str = ""
    reason: str = ""
    rule: str | None = None
    by: str = ""
    would_ask: bool = False  # False: refused by a rule or the mode, without a question
    asked: bool = False  # False with would_ask: nobody could answer (a headless run)
    answer: str = ""
    note: str | None = None
    saved_rules: list[str] = field(default_factory=list)
    save_error: str | None = None
