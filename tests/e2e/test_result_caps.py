"""Every tool result fits the window it goes into, through the real CLI: an 8k-window
session reads a wide generated header (like the kernel's register headers), greps it, cats
it and lists a tree, and no request the scripted server receives is over the window, while
each result says how to get the rest."""

from __future__ import annotations

import json
import re

from tests.e2e.test_file_tools import told
from tests.modelserver import error, text, tool

WINDOW = 8192


def request_tokens(body: dict) -> float:
    """A request's size in tokens, counted high: its JSON at 3.5 characters a token (a wide
    header tokenizes at about that; JSON's escapes only add characters)."""
    return len(json.dumps(body, ensure_ascii=False)) / 3.5


def test_an_8k_window_session_gets_every_result_within_the_window(caretz, server, workspace):
    header = workspace / "include" / "asic_reg" / "gc_11_0_0_sh_mask.h"
    header.parent.mkdir(parents=True)
    header.write_text(
        "".join(
            f"#define GC_REG_{n:05d}__FIELD_{n % 97:02d}_MASK{' ' * 40}0x{n * 2654435761 % 2**32:08X}L"
            f"  /* {'wide comment ' * 6}*/\n"
            for n in range(4000)
        )
    )
    for n in range(400):  # a tree to list
        (workspace / "src" / f"d{n % 20}").mkdir(parents=True, exist_ok=True)
        (workspace / "src" / f"d{n % 20}" / f"file_{n:03d}.c").write_text(f"int f{n};\n")
    caretz.write_config({"profiles": {"general": {"contextWindow": WINDOW, "maxTokens": 1024}}})
    path = "include/asic_reg/gc_11_0_0_sh_mask.h"
    server.add(
        tool("read", path=path),
        tool("grep", pattern="MASK", path=path),
        tool("bash", command=f"cat {path}"),
        tool("glob", pattern="src/**/*.c"),
        text("done"),
    )

    run = caretz("-p", "look at the header", "--loop-guard", "off")

    assert run.code == 0, run.stderr
    sizes = [request_tokens(request.body) for request in server.requests]
    assert max(sizes) < WINDOW, sizes
    read, grep, cat, listed = told(server)[-4:] if len(told(server)) >= 4 else told(server)
    assert re.search(r"\(the output limit of [\d,]+ characters\); offset=\d+ for more\]$", read)
    assert re.search(r"offset=\d+ for more\]$", grep)
    assert "[the whole output (" in cat and "caretz-output-" in cat
    assert listed.splitlines()[0].startswith("src/d") and "offset=" in listed.splitlines()[-1]
    assert len(read) > 2_000  # capped to the room, not starved


def test_a_refused_prompt_shortens_the_newest_result_when_nothing_else_can_and_says_so(
    caretz, server, workspace
):
    """The window set too large (a local server's is smaller): the provider refuses; with
    nothing older to summarize, the newest result is shortened and the run goes on."""
    (workspace / "wide.h").write_text(
        "".join(f"#define R_{n:05d} 0x{n:08X}\n" for n in range(20000))
    )
    caretz.write_config({"profiles": {"general": {"contextWindow": 32000}}})
    server.add(
        tool("read", path="wide.h"),
        error(400, "prompt is too long: 41000 tokens > 32000 maximum"),
        text("SUMMARY: the user asked to read wide.h."),
        text("done"),
    )

    run = caretz("-p", "read it", "--loop-guard", "off")

    assert run.code == 0, run.stderr
    refused, retried = server.requests[1], server.requests[3]
    (result,) = told(server)
    assert "characters cut here: this result did not fit the model's context window" in result
    assert len(json.dumps(retried.body)) < len(json.dumps(refused.body)) - 15_000
    compacted = [e for e in caretz.events(run.session_id) if e["type"] == "Session.Compacted"]
    # The summary of the one older message freed nothing; then the newest was shortened.
    assert [(c["reason"], c.get("shortened")) for c in compacted] == [
        ("overflow", None),
        ("overflow", 1),
    ]
    assert "shortened the newest 1 tool result(s) to fit the window" in run.stderr
