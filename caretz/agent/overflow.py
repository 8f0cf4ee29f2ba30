"""The last resort when the newest step alone does not fit the context window.

Compaction never cuts the newest step: it is what the model works on. But when the
provider refused the prompt as too long and summarizing and trimming the older steps did
not free enough (or the estimate is over the window itself), the newest step's tool
results are shortened, the largest first, to their head and tail around a marker that
says why and names the file holding the whole result, so the model can read it in parts.
Tool results are capped to the room left when they are made (tools/result_cap.py), so
this happens only when that room was misjudged.
"""

from __future__ import annotations

import dataclasses

from caretz.messages import Message
from caretz.tools.result_cap import keep_whole

NEWEST_CUT = (
    "[… {count:,} characters cut here: this result did not fit the model's context "
    "window. {where} Ask for less: a smaller part (offset and limit), a narrower search …]"
)
MIN_KEPT_CHARS = 400


def shorten_newest(
    conversation: list[Message], start: int, excess_chars: int
) -> tuple[list[Message], int]:
    """A copy of `conversation` whose tool results from `start` on are shorter by about
    `excess_chars` in all (the largest first), and how many were shortened."""
    result = list(conversation)
    tools = [i for i in range(start, len(result)) if result[i].role == "tool"]
    shortened = 0
    for index in sorted(tools, key=lambda i: -len(result[i].content)):
        if excess_chars <= 0:
            break
        content = result[index].content
        keep = max(len(content) - excess_chars - len(NEWEST_CUT) - 200, MIN_KEPT_CHARS)
        if keep >= len(content):
            continue
        cut = _head_and_tail(content, keep)
        excess_chars -= len(content) - len(cut)
        result[index] = dataclasses.replace(result[index], content=cut)
        shortened += 1
    return result, shortened


def _head_and_tail(text: str, keep: int) -> str:
    head = keep * 2 // 5
    tail = keep - head
    count = len(text) - keep
    where = keep_whole(text).strip("[]").rstrip(".") + "."
    marker = NEWEST_CUT.format(count=count, where=where[0].upper() + where[1:])
    return f"{text[:head]}\n{marker}\n{text[len(text) - tail :]}"
