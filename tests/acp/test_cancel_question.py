"""session/cancel while a permission question is open: the question is answered (with
nothing), so the worker thread blocked on it goes on to end the work as Ctrl-C does.

An app session's cancel cannot reach a thread blocked on the editor's answer (an
interrupt lands only in Python code): the editor session's cancel must withdraw the
question itself, whatever else ends the work.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from caretz.acp.permissions import EditorAsker
from caretz.acp.sessions import AcpSession
from caretz.tools.asking import Question

WAIT_S = 60  # a failing wait only


class SilentEditor:
    """An editor that announces each question it is asked and never answers one."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()
        self.updates: list[Any] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def request_permission(self, **kwargs: Any) -> Any:
        self.asked.set()
        await asyncio.Event().wait()


class RunningWork:
    """The app session's side of a cancel: the work it would interrupt."""

    def __init__(self) -> None:
        self.cancels = 0

    def cancel(self) -> None:
        self.cancels += 1


def test_a_cancel_answers_the_open_question_and_the_asking_thread_ends_the_work(
    tmp_path: Path,
):
    question = Question(
        tool="bash", arguments={"command": "make"}, summary="make", reason="the mode asks"
    )

    async def scenario() -> tuple[BaseException | None, int]:
        editor = SilentEditor()
        acp_session = AcpSession(asyncio.get_running_loop(), editor, tmp_path)  # type: ignore[arg-type]
        work = RunningWork()
        acp_session.session = work  # type: ignore[assignment]
        acp_session.running = True
        acp_session.outbox.start()
        asker = EditorAsker(acp_session.view, acp_session._ask)
        raised: list[BaseException] = []

        def ask() -> None:
            try:
                asker(question)
            except BaseException as error:  # the KeyboardInterrupt the cancel ends it with
                raised.append(error)

        asking = threading.Thread(target=ask, daemon=True)
        asking.start()
        try:
            async with asyncio.timeout(WAIT_S):
                await editor.asked.wait()
            acp_session.cancel()
            await asyncio.to_thread(asking.join, WAIT_S)
        finally:
            acp_session.questions.withdraw()  # a thread still asking must not outlive the test
            await acp_session.outbox.close()
        return (raised[0] if raised else None), work.cancels

    raised, cancels = asyncio.run(scenario())

    assert isinstance(raised, KeyboardInterrupt), "the question was never answered"
    assert str(raised) == "the prompt was cancelled while its question was open"
    assert cancels == 1


def test_a_cancel_before_the_question_asks_nothing(tmp_path: Path):
    async def scenario() -> SilentEditor:
        editor = SilentEditor()
        acp_session = AcpSession(asyncio.get_running_loop(), editor, tmp_path)  # type: ignore[arg-type]
        acp_session.session = RunningWork()  # type: ignore[assignment]
        acp_session.running = True
        acp_session.cancel()
        asker = EditorAsker(acp_session.view, acp_session._ask)
        with pytest.raises(KeyboardInterrupt, match="the prompt was cancelled"):
            asker(
                Question(
                    tool="bash",
                    arguments={"command": "make"},
                    summary="make",
                    reason="the mode asks",
                )
            )
        return editor

    assert not asyncio.run(scenario()).asked.is_set()
