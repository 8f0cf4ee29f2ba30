"""The bridge between the turn's thread and the event loop: order, flush, questions."""

from __future__ import annotations

import asyncio
import threading

from caretz.acp.bridge import Outbox, Questions


def test_updates_posted_from_a_thread_are_sent_in_order_before_flush_returns():
    async def scenario() -> list[int]:
        sent: list[int] = []

        async def send(update: int) -> None:
            await asyncio.sleep(0)  # a send that yields, as a pipe's drain does
            sent.append(update)

        outbox = Outbox(asyncio.get_running_loop(), send)
        outbox.start()
        worker = threading.Thread(target=lambda: [outbox.post(n) for n in range(200)])
        worker.start()
        await asyncio.to_thread(worker.join)
        outbox.post(200)  # from the loop itself, right before the flush
        await outbox.flush()
        await outbox.close()
        return sent

    assert asyncio.run(scenario()) == list(range(201))


def test_a_question_waits_for_the_updates_before_it_and_withdrawing_answers_none():
    async def scenario() -> tuple[list[str], object, object]:
        seen: list[str] = []

        async def send(update: str) -> None:
            seen.append(update)

        outbox = Outbox(asyncio.get_running_loop(), send)
        outbox.start()
        questions = Questions(outbox)

        async def answered() -> str:
            seen.append("question")
            return "yes"

        def ask_twice() -> tuple[object, object]:
            outbox.post("the call")
            first = questions.ask(answered)
            second = questions.ask(lambda: asyncio.Event().wait())  # never answered
            return first, second

        asking = asyncio.ensure_future(asyncio.to_thread(ask_twice))
        while not second_asked(questions, seen):  # the second question is out, unanswered
            await asyncio.sleep(0.01)
        questions.withdraw()
        first, second = await asking
        await outbox.close()
        return seen, first, second

    seen, first, second = asyncio.run(scenario())
    assert seen == ["the call", "question"]
    assert (first, second) == ("yes", None)


def second_asked(questions: Questions, seen: list[str]) -> bool:
    request = questions.request
    return seen == ["the call", "question"] and request is not None and not request.done()
