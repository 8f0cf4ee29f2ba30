"""MCP resources and prompts through the real CLI (`caretz -p`), the loopback model server
and a real MCP server written for the test (tests/mcp/servers/library.py): an
`@server:uri` mention in the prompt, the read and list tools, a binary resource, an
unknown server or URI, a prompt as `/mcp__server__prompt` with its arguments."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Caretz
from tests.mcp.conftest import BOUND_S, STARTUP_ROOM, within
from tests.mcp.test_headless import profile, result_text
from tests.modelserver import ModelServer, RecordedRequest, calls, text, tool

LIBRARY = Path(__file__).parent / "servers" / "library.py"
README = "The deploy key rotates on Fridays; ask Ada before touching it."


def library(*args: str) -> dict[str, Any]:
    entry = [str(LIBRARY), *args]
    return {"command": sys.executable, "args": entry, "startupTimeout": STARTUP_ROOM}


def user_text(request: RecordedRequest, index: int = 0) -> str:
    content = request.messages[index]["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content)


def tool_results(request: RecordedRequest) -> list[dict[str, Any]]:
    return [b for b in request.messages[-1]["content"] if b.get("type") == "tool_result"]


def test_a_mention_reaches_the_model_and_the_read_tools_read_text_images_and_binary(
    caretz: Caretz, server: ModelServer
):
    # Within mcp.maxResultChars, over the window's result cap (at most 87,500 characters).
    caretz.write_config(profile({"library": library()}, maxResultChars=200_000))
    server.add(
        calls(
            ("list_mcp_resources", {}),
            ("read_mcp_resource", {"server": "library", "uri": "notes://pixel.png"}),
            ("read_mcp_resource", {"server": "library", "uri": "notes://archive.bin"}),
            ("read_mcp_resource", {"server": "library", "uri": "notes://nothing"}),
            ("read_mcp_resource", {"server": "elsewhere", "uri": "notes://readme"}),
        ),
        text("Rotates on Fridays."),
    )

    asked = "when does @library:notes://readme say the key rotates? (see @library:notes://big)"
    run = caretz("-p", asked)

    assert run.code == 0, run.stderr
    first, second = server.requests
    prompt = user_text(first)
    assert prompt.startswith(asked)
    assert '<resource server="library" uri="notes://readme">' in prompt and README in prompt
    # A large resource is cut to the result cap like a tool result: head and tail.
    assert "ledger line 00000" in prompt and "ledger line 08999" in prompt
    assert "ledger line 04500" not in prompt and len(prompt) < 100_000
    # The resource tools are offered once the server with resources is ready.
    assert {"list_mcp_resources", "read_mcp_resource"} <= set(second.tool_names)
    listed, image, binary, missing, unknown = tool_results(second)
    assert "library: notes://readme" in result_text(listed)
    assert "library: notes://archive.bin" in result_text(listed)
    assert not image.get("is_error")
    kinds = [block["type"] for block in image["content"]]
    assert "image" in kinds and "attached" in result_text(image)
    said = result_text(binary)
    assert "notes://archive.bin: application/octet-stream, 2.0 KB; not shown" in said
    assert "\x00" not in said and len(said) < 200
    assert missing["is_error"] and result_text(missing).count("\n") == 0
    assert "MCP server 'library' could not read notes://nothing" in result_text(missing)
    assert unknown["is_error"]
    assert result_text(unknown).startswith("no MCP server named 'elsewhere'")
    attached = [e for e in caretz.events(run.session_id) if e["type"] == "Mcp.ResourceAttached"]
    assert [event["uri"] for event in attached] == ["notes://readme", "notes://big"]


def test_a_prompt_command_expands_and_a_deny_rule_on_the_server_refuses_its_resources(
    caretz: Caretz, server: ModelServer
):
    caretz.write_config(profile({"library": library()}, deny=["mcp__library"]))
    server.add(tool("read_mcp_resource", server="library", uri="notes://readme"), text("Reviewed."))

    run = caretz("-p", '/mcp__library__review 42 "line by line"')

    assert run.code == 0, run.stderr
    first, second = server.requests
    assert user_text(first) == "Review pull request 42 in a line by line style."
    [refused] = tool_results(second)
    assert refused["is_error"] and "denied by the deny rule" in result_text(refused)
    assert README not in result_text(refused)


def test_a_missing_argument_sends_nothing_and_a_mention_that_fails_is_one_line(
    caretz: Caretz, server: ModelServer
):
    caretz.write_config(profile({"library": library()}))
    server.add(text("No such resource here."))

    missing = caretz("-p", "/mcp__library__review")
    mentioned = caretz("-p", "compare @library:notes://gone with @nosuch:notes://readme")

    assert missing.code == 2, missing.stderr
    assert (
        "caretz: /mcp__library__review: missing its required argument 'pr' "
        "(/mcp__library__review <pr> [style]) (nothing was sent)"
    ) in missing.stderr.splitlines(), missing.stderr
    assert mentioned.code == 0, mentioned.stderr
    said = mentioned.stderr.splitlines()
    lines = [line for line in said if line.startswith("mcp: @") and "was not attached" in line]
    assert len(lines) == 2, mentioned.stderr
    gone, nosuch = lines
    assert gone.startswith("mcp: @library:notes://gone was not attached: MCP server 'library'")
    assert nosuch.startswith("mcp: @nosuch:notes://readme was not attached: no MCP server named")
    # The message went as typed, without them.
    [request] = server.requests
    assert user_text(request) == "compare @library:notes://gone with @nosuch:notes://readme"


def test_a_mention_of_a_server_still_starting_waits_for_it(
    caretz: Caretz, server: ModelServer, tmp_path: Path
):
    """The server is held until the session's log says the mention waits for it."""
    release = tmp_path / "release"
    caretz.write_config(profile({"library": library("--start-when", str(release))}))
    server.add(text("Fridays."))

    def release_once_awaited() -> bool:
        logs = (caretz.data_dir / "sessions").glob("*/events.jsonl")
        if any("Mcp.ServerAwaited" in log.read_text() for log in logs):
            release.touch()
        return release.exists()

    releasing = threading.Thread(target=within, args=(release_once_awaited, BOUND_S))
    releasing.start()
    try:
        run = caretz("-p", "what does @library:notes://readme say?")
    finally:
        release.touch()
        releasing.join()

    assert run.code == 0, run.stderr
    assert README in user_text(server.requests[0])
    assert (
        "mcp: @library:notes://readme waits for server 'library' to start (at most 600 s)"
        in run.stderr.splitlines()
    ), run.stderr
