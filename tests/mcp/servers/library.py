"""An MCP server with resources and prompts, written with the SDK's MCPServer:

    python tests/mcp/servers/library.py [--start-when PATH]

`--start-when PATH` waits, before it serves, until PATH exists (the test decides when).

Resources: `notes://readme` (text), `notes://pixel.png` (a PNG), `notes://archive.bin`
(binary that is no image), `notes://big` (162,000 characters). Prompt: `review(pr, style="terse")`. One tool, `echo`.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("library")

README = "The deploy key rotates on Fridays; ask Ada before touching it."
# A 1x1 PNG.
PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f80f0000010100005c0d0a2d0000000049454e44ae426082"
)


@server.resource("notes://readme", name="readme", mime_type="text/plain")
def readme() -> str:
    return README


@server.resource("notes://pixel.png", name="pixel", mime_type="image/png")
def pixel() -> bytes:
    return PIXEL


@server.resource("notes://archive.bin", name="archive", mime_type="application/octet-stream")
def archive() -> bytes:
    return bytes(range(256)) * 8


@server.resource("notes://big", name="big", mime_type="text/plain")
def big() -> str:
    return "".join(f"ledger line {n:05d}\n" for n in range(9000))  # 162,000 characters


@server.prompt()
def review(pr: str, style: str = "terse") -> str:
    """Review a pull request."""
    return f"Review pull request {pr} in a {style} style."


@server.tool()
def echo(text: str) -> str:
    """Send the text back."""
    return f"echo: {text}"


if __name__ == "__main__":
    if sys.argv[1:2] == ["--start-when"]:
        while not Path(sys.argv[2]).exists():
            time.sleep(0.05)
    server.run()
