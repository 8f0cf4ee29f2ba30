"""Command output as the model reads it, end to end: the real CLI in its sandbox, the
loopback model server. Colour and progress lines are cleaned; a long output names the file
that keeps all of it, and the model's read of that file with an offset works."""

from __future__ import annotations

import re

from tests.modelserver import RecordedRequest, Reply, text, tool


def last_tool_result(request: RecordedRequest) -> str:
    block = request.messages[-1]["content"][0]
    assert block["type"] == "tool_result"
    content = block["content"]
    return content if isinstance(content, str) else "".join(c["text"] for c in content)


def test_the_model_reads_clean_output_and_can_open_the_whole_of_a_long_one(caretz, server):
    command = (
        "printf '\\033[1;32mPASSED\\033[0m\\n'; "
        "for i in 1 2 3; do printf '\\r%s%%' $((i * 33)); done; echo; "
        "seq -f 'row %06g' 1 60000"
    )
    seen: dict[str, str] = {}

    def respond(request: RecordedRequest) -> Reply | None:
        output = last_tool_result(request)
        if "bash" not in seen:
            seen["bash"] = output
            where = re.search(r"is in (\S+): read it with the read tool", output)
            assert where, output[-500:]
            return tool("read", path=where[1], offset=50_000, limit=2)
        seen["read"] = output
        return text("read it")

    server.add(tool("bash", command=command))
    server.on(respond)

    run = caretz("-p", "run the long command")

    assert run.code == 0, run.stderr
    assert seen["bash"].startswith("PASSED\n99%\nrow 000001\n")
    assert "\x1b" not in seen["bash"] and "\r" not in seen["bash"]
    assert seen["bash"].rstrip().endswith("row 060000")
    assert seen["read"].splitlines()[:2] == [" 50000\trow 049998", " 50001\trow 049999"]
