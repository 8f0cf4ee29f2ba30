"""The turn loop's records: a turn, its model requests and replies, its tool calls.

Each names its turn and agent (`LoopRecord`); `Turn.emit` fills them in.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, ClassVar

from caretz.session.records.base import LoopRecord, optional, record

JsonDict = dict[str, Any]


@record
class TurnStarted(LoopRecord):
    TYPE: ClassVar[str] = "Turn.Started"
    prompt: str = ""
    model: str = ""
    from_user: bool = True
    images: list[dict[str, Any]] | None = optional()  # the images sent with it, by digest


@record
class TurnEnded(LoopRecord):
    TYPE: ClassVar[str] = "Turn.Ended"
    status: str = ""
    exit_code: int = 0
    message: str = ""
    text: str = ""
    tool_calls: int = 0
    duration_s: float = 0.0
    usage: JsonDict = field(default_factory=dict)
    cost_usd: float | None = None


@record
class ModelRequested(LoopRecord):
    TYPE: ClassVar[str] = "Model.Request"
    model: str = ""
    messages: int = 0  # how many the request sent
    tools: int = 0
    trailing: list[str] = field(default_factory=list)  # the guard's notes, sent after them


@record
class ModelReplied(LoopRecord):
    TYPE: ClassVar[str] = "Model.Response"
    model: str = ""
    message: JsonDict = field(default_factory=dict)  # Message.to_dict()
    usage: JsonDict = field(default_factory=dict)
    stop_reason: str | None = None
    latency_s: float = 0.0
    cost_usd: float | None = None


@record
class ModelOutputLimit(LoopRecord):
    TYPE: ClassVar[str] = "Model.OutputLimit"
    action: str = ""  # "continued", "calls_not_run" or "ended"
    max_tokens: int = 0
    continuation: int = 0
    tool_calls: list[str] = field(default_factory=list)


@record
class ModelPromptTooLong(LoopRecord):
    TYPE: ClassVar[str] = "Model.PromptTooLong"
    error: str = ""
    status: int | None = None


@record
class ProviderRetrying(LoopRecord):
    TYPE: ClassVar[str] = "Provider.Retrying"
    attempt: int = 0
    delay_s: float = 0.0
    reason: str = ""
    discarded: JsonDict | None = None  # the partial reply given up, as Message.to_dict()


@record
class ProviderFailed(LoopRecord):
    TYPE: ClassVar[str] = "Provider.Error"
    error: str = ""
    status: int | None = None
    partial: JsonDict | None = None


@record
class ToolCalled(LoopRecord):
    TYPE: ClassVar[str] = "Tool.Called"
    index: int = 0
    call: JsonDict = field(default_factory=dict)  # ToolCall.to_dict()


@record
class ToolReturned(LoopRecord):
    """A tool call's result: the fields of `tools.base.ToolResult.to_dict()`, the call's
    ID and name, and the diff an edit made."""

    TYPE: ClassVar[str] = "Tool.Result"
    index: int = 0
    call_id: str = ""
    name: str = ""
    ok: bool = False
    output: str = ""
    exit_code: int | None = None
    duration_s: float = 0.0
    files_changed: list[str] | None = optional()
    ended_by: str | None = optional()
    images: list[dict[str, Any]] | None = optional()  # by digest (EventLog.keep_images)
    diff: str | None = None
