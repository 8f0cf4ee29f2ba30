"""How much of a tool result goes into the model's context: the one place every cap comes from.

A result's cap is derived from the model's context window and what the conversation
already uses: half the room left below the point where compaction starts (split between
the calls of one batch), never more than 25,000 tokens (Claude Code's cap on a read) and
never less than 500. Tokens are counted here at 3.5 characters each, not the 4 of prose:
code, paths and markup run denser (a wide kernel header: 3.5).

Every call goes through the tool registry, which gives the tool its cap as
`ToolContext.output_limit_chars` (read, grep, glob, bash, job_output and web_fetch stop
within it and say how to go on) and then fits what came back (`fit`): a result still
over the cap, from any tool (an MCP server's, a hook's addition), is cut to its head and
tail, and the whole of it is kept in a file the result names, as bash's long output is.
"""

from __future__ import annotations

import dataclasses

from caretz.tools.base import ToolResult
from caretz.tools.output import FullOutput, HeadTailBuffer

MAX_RESULT_TOKENS = 25_000
MIN_RESULT_TOKENS = 500
ROOM_SHARE = 0.5
CHARS_PER_TOKEN = 3.5
# A tool fills its cap and then says how to go on (an offset, where the rest is, why it
# stopped): those lines may go past the cap by this much before the registry cuts.
NOTE_ROOM_CHARS = 1_000


def cap_chars(room_tokens: int, calls: int = 1) -> int:
    """The cap, in characters, of each of `calls` results that share `room_tokens`: the
    tokens left before the context reaches the point where it is compacted."""
    share = int(max(room_tokens, 0) * ROOM_SHARE) // max(calls, 1)
    tokens = max(MIN_RESULT_TOKENS, min(MAX_RESULT_TOKENS, share))
    return int(tokens * CHARS_PER_TOKEN)


MAX_RESULT_CHARS = cap_chars(MAX_RESULT_TOKENS * 2)


def fit(result: ToolResult, cap: int) -> ToolResult:
    """`result` within `cap` characters (and the room for a tool's own notes): as it is,
    or its head and tail around a line naming the file that holds all of it."""
    if len(result.output) <= cap + NOTE_ROOM_CHARS:
        return result
    where = keep_whole(result.output, cap)
    kept = HeadTailBuffer(cap)
    kept.add(result.output)
    return dataclasses.replace(result, output=kept.render(where))


def keep_whole(text: str, cap: int = 0) -> str:
    """Writes `text` to a file of its own (private to the user, in the temporary
    directory); the line that says where it is, for the model."""
    full = FullOutput(cap)
    full.add(text)
    notice = full.notice()
    return notice or "[the whole result could not be kept]"
