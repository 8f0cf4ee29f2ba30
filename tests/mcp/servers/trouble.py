"""An MCP server for the error cases, written with the SDK's MCPServer: one that crashes
mid-call, hangs, answers with an error or with far too much, or is slow to start.

    python tests/mcp/servers/trouble.py [--start-when PATH] [--http PORT [--sse]] [--pid-file PATH]
                                        [--record-headers PATH]

stdio by default; `--http PORT` serves streamable HTTP on 127.0.0.1:PORT/mcp instead, and
with `--sse` the older SSE transport on 127.0.0.1:PORT/sse.
`--pid-file` writes the server's pid there once it runs (the tests check it is gone).
`--record-headers` appends each HTTP request's headers to PATH, one JSON object a line.
`--start-when PATH` waits, before it serves, until PATH exists (the test decides when, or
never: a server that does not start in any time, on a machine of any speed).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

server = MCPServer("trouble")

# A 1x1 PNG.
PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f80f0000010100005c0d0a2d0000000049454e44ae426082"
)


@server.tool()
def echo(text: str) -> str:
    """Send the text back."""
    return f"echo: {text}"


@server.tool()
def crash() -> str:
    """Exit in the middle of the call, as a server with a bug would."""
    sys.stderr.write("trouble: crashing on purpose\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool()
def fail(reason: str) -> str:
    """Answer with an error result (isError)."""
    raise ToolError(f"the database is locked: {reason}")


@server.tool()
def huge(chars: int) -> str:
    """Answer with `chars` characters."""
    return "x" * chars


@server.tool()
def hang(seconds: float, mark: str = "") -> str:
    """Take `seconds` to answer; write `mark` (a path) first, if given."""
    if mark:
        Path(mark).write_text("hanging")
    time.sleep(seconds)
    return "finally"


# `meet` is a barrier: no call answers until `parties` calls are in the server at once.
MEET_LIMIT_S = 60.0  # only a call that would otherwise wait for good ends here
_meeting: dict[str, object] = {"arrived": 0}


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
async def meet(parties: int) -> str:
    """Answer once `parties` calls of meet have arrived (read-only)."""
    event = _meeting.setdefault("event", asyncio.Event())
    assert isinstance(event, asyncio.Event)
    _meeting["arrived"] = int(_meeting["arrived"]) + 1  # type: ignore[call-overload]
    if int(_meeting["arrived"]) >= parties:  # type: ignore[call-overload]
        event.set()
    try:
        await asyncio.wait_for(event.wait(), MEET_LIMIT_S)
    except TimeoutError:
        return f"alone: {_meeting['arrived']} of {parties} calls arrived"
    return f"together: {parties} calls arrived"


@server.tool()
def picture() -> list:
    """An image and a caption."""
    return ["a pixel:", Image(data=PIXEL, format="png")]


@server.tool()
def screenshot(width: int, height: int) -> list:
    """A `width` × `height` PNG (made with Pillow), as a browser tool's screenshot."""
    import io

    from PIL import Image as Picture

    out = io.BytesIO()
    Picture.new("RGB", (width, height), (30, 90, 200)).save(out, format="PNG")
    return [f"{width}x{height} screenshot", Image(data=out.getvalue(), format="png")]


@server.tool()
def bogus_image() -> list:
    """An image block whose bytes are no image."""
    return [Image(data=b"not an image at all", format="png")]


@server.tool()
def weather(city: str) -> dict:
    """Structured content."""
    return {"city": city, "celsius": 21}


@server.tool()
def env(name: str) -> str:
    """The server's environment variable `name`, or (unset)."""
    return os.environ.get(name, "(unset)")


@server.tool()
def header(name: str, ctx: Context) -> str:
    """The HTTP request's header `name` (streamable HTTP only)."""
    request = ctx.request_context.request
    return request.headers.get(name, "(none)") if request is not None else "(not HTTP)"


def recording_headers(app, path: Path):
    """The ASGI app, writing down every request's headers before it answers."""

    async def recorded(scope, receive, send):
        if scope["type"] == "http":
            headers = {name.decode(): value.decode() for name, value in scope["headers"]}
            with path.open("a") as out:
                out.write(json.dumps({"path": scope["path"], "headers": headers}) + "\n")
        await app(scope, receive, send)

    return recorded


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--start-when", type=Path)
    parser.add_argument("--http", type=int, default=0)
    parser.add_argument("--sse", action="store_true")
    parser.add_argument("--pid-file", type=Path)
    parser.add_argument("--record-headers", type=Path)
    args = parser.parse_args()
    if args.pid_file is not None:
        args.pid_file.write_text(str(os.getpid()))
    while args.start_when is not None and not args.start_when.exists():
        time.sleep(0.05)
    if args.http:
        import uvicorn

        app = server.sse_app() if args.sse else server.streamable_http_app()
        if args.record_headers is not None:
            app = recording_headers(app, args.record_headers)
        uvicorn.run(app, host="127.0.0.1", port=args.http, log_level="warning")
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
