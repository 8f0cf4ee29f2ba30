"""An editor for the ACP tests: the SDK's own client side, driving `python -m caretz acp`
in a subprocess over its stdin and stdout, as Zed or any other ACP client does.

The editor records every update in order and answers permission questions from a list
(an option id, or None for "cancelled"); each question remembers how many updates had
arrived before it, so a test can check the call was announced first.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    InitializeResponse,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UserMessageChunk,
)

from tests.e2e.conftest import Caretz

HOLD = "hold"
POLL_S = 0.02
WAIT_S = 90  # for anything the agent should do: generous, so busy CI machines pass
# A whole scenario (a few prompts, each a wait of its own): a hang anywhere in it, such as
# an answer that never comes, fails the test by name within the suite's limit per test.
SCENARIO_S = 240


@dataclass
class Question:
    tool_call: ToolCallUpdate
    options: list[PermissionOption]
    updates_before: int


@dataclass
class Editor:
    """The client side: what caretz sent, and the editor's scripted answers."""

    answers: list[str | None] = field(default_factory=list)  # HOLD: never answered
    buffers: dict[str, str] = field(default_factory=dict)  # open files, by absolute path
    updates: list[Any] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    process: Any = None  # the agent's process, once started

    def __post_init__(self) -> None:
        self.arrived = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)
        self.arrived.set()

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        self.questions.append(Question(tool_call, options, len(self.updates)))
        self.arrived.set()
        choice = self.answers.pop(0) if self.answers else None
        if choice == HOLD:
            await asyncio.Event().wait()  # an editor that never answers; closing ends it
        if choice is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=choice)
        )

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        self.reads.append(path)
        if path not in self.buffers:
            raise RequestError.resource_not_found(path)
        return ReadTextFileResponse(content=self.buffers[path])

    def on_connect(self, conn: Any) -> None:
        pass

    async def until(self, condition: Callable[[], bool]) -> None:
        """Wait until `condition()` holds (a file appearing, an update arriving): checked as
        each message arrives, and every few milliseconds for what no message announces."""
        async with asyncio.timeout(WAIT_S):
            while not condition():
                self.arrived.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.arrived.wait(), POLL_S)

    # -- what arrived ---------------------------------------------------------------------
    def of(self, kind: type) -> list[Any]:
        return [update for update in self.updates if isinstance(update, kind)]

    def text(self) -> str:
        return "".join(chunk.content.text for chunk in self.of(AgentMessageChunk))

    def thoughts(self) -> str:
        return "".join(chunk.content.text for chunk in self.of(AgentThoughtChunk))

    def user_text(self) -> str:
        return "".join(chunk.content.text for chunk in self.of(UserMessageChunk))

    def started(self, kind: str | None = None) -> list[ToolCallStart]:
        calls = self.of(ToolCallStart)
        return [call for call in calls if kind is None or call.kind == kind]

    def progress(self, call_id: str) -> list[ToolCallProgress]:
        return [u for u in self.of(ToolCallProgress) if u.tool_call_id == call_id]

    def finished(self, call_id: str) -> ToolCallProgress:
        (last,) = [u for u in self.progress(call_id) if u.status in ("completed", "failed")]
        return last

    def plans(self) -> list[AgentPlanUpdate]:
        return self.of(AgentPlanUpdate)

    def index(self, update: Any) -> int:
        return next(i for i, each in enumerate(self.updates) if each is update)


@contextlib.asynccontextmanager
async def caretz_acp(
    caretz: Caretz,
    editor: Editor,
    *flags: str,
    env: dict[str, str | None] | None = None,
) -> AsyncIterator[tuple[Any, InitializeResponse]]:
    """`python -m caretz <flags> acp` in the workspace, initialized; its stderr goes to
    acp-stderr.log beside the workspace."""
    log = caretz.workspace.parent / "acp-stderr.log"
    with log.open("a") as stderr:
        async with spawn_agent_process(
            editor,
            sys.executable,
            "-m",
            "caretz",
            *flags,
            "acp",
            env=caretz.environment(env),  # type: ignore[arg-type]
            cwd=caretz.workspace,
            transport_kwargs={"stderr": stderr.fileno(), "shutdown_timeout": 30.0},
        ) as (conn, process):
            editor.process = process
            capabilities = ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=bool(editor.buffers))
            )
            async with asyncio.timeout(WAIT_S):
                ready = await conn.initialize(
                    protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities
                )
            yield conn, ready


def run(scenario: Any) -> Any:
    """Run one async scenario to its end (the tests are plain functions), within
    SCENARIO_S."""

    async def bounded() -> Any:
        limit = asyncio.timeout(SCENARIO_S)
        try:
            async with limit:
                return await scenario
        except TimeoutError:
            if not limit.expired():
                raise  # a wait of the scenario's own (its message says which)
            raise AssertionError(f"the ACP scenario did not end within {SCENARIO_S}s") from None

    return asyncio.run(bounded())


def texts(blocks: Iterable[Any]) -> str:
    return "".join(getattr(getattr(block, "content", None), "text", "") for block in blocks or ())


def workspace_path(caretz: Caretz, name: str) -> str:
    return str(Path(caretz.workspace) / name)
