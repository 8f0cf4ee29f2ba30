"""What a model reads of command output: no terminal escapes, `\\r` progress collapsed, and
for a long output, where the whole of it is kept."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from caretz.tools.base import ToolContext
from caretz.tools.bash import BashTool
from caretz.tools.files import ReadTool
from caretz.tools.jobs import JobOutputTool
from caretz.tools.output import model_text


@pytest.mark.parametrize(
    ("raw", "read"),
    [
        ("\x1b[1;31mFAILED\x1b[0m test_a", "FAILED test_a"),
        ("\x1b]0;window title\x07text", "text"),
        ("\x1b]8;;https://x.test\x1b\\link\x1b]8;;\x1b\\", "link"),
        ("\x1b(Bplain\x1b=", "plain"),
        ("10%\r50%\r100%\nnext\n", "100%\nnext\n"),
        ("\x1b[2K\rDownloading 3/3\n", "Downloading 3/3\n"),
        ("windows\r\nlines\r\n", "windows\nlines\n"),
        ("ends with a return\r", "ends with a return"),
        ("no escapes here\n", "no escapes here\n"),
    ],
)
def test_model_text(raw, read):
    assert model_text(raw) == read


def test_bash_output_reaches_the_model_without_colour_or_progress(tmp_path):
    command = (
        "printf '\\033[32mok\\033[0m\\n'; "
        "for i in 1 2 3; do printf '\\rdownloading %s/3' $i; done; echo; echo done"
    )
    result = BashTool().run({"command": command}, ToolContext(workspace=tmp_path))
    assert result.output == "ok\ndownloading 3/3\ndone"


def test_job_output_reaches_the_model_without_colour(tmp_path):
    ctx = ToolContext(workspace=tmp_path)
    started = BashTool().run(
        {"command": "printf '\\033[31mred\\033[0m\\r\\033[Kdone\\n'", "background": True}, ctx
    )
    job_id = re.search(r"job (j\d+)", started.output).group(1)
    job = ctx.jobs.get(job_id)
    job.log.wait_past(len("\x1b[31mred\x1b[0m\r\x1b[Kdone\n") - 1, 30)
    read = JobOutputTool().run({"job_id": job_id}, ctx)
    assert read.output.splitlines()[1:] == ["done"]
    ctx.jobs.stop_all()


def test_a_50_mb_output_says_where_the_whole_of_it_is_and_read_can_open_it(tmp_path):
    ctx = ToolContext(workspace=tmp_path)
    command = "seq -f 'line %07g of fifty megabytes of output, padded to fill' 1 870000"
    result = BashTool().run({"command": command}, ctx)
    notice = re.search(
        r"^\[the whole output \(([\d,]+) characters, ([\d,]+) lines\) is in (\S+):",
        result.output,
        re.M,
    )
    assert notice, result.output[-2000:]
    chars, lines, path = int(notice[1].replace(",", "")), int(notice[2].replace(",", "")), notice[3]
    assert chars >= 50_000_000 and lines == 870_000
    assert len(result.output) <= ctx.output_limit_chars
    assert Path(path).stat().st_size == chars
    page = ReadTool().run({"path": path, "offset": 415_000, "limit": 2}, ctx).output
    assert page.splitlines()[:2] == [
        "415000\tline 0415000 of fifty megabytes of output, padded to fill",
        "415001\tline 0415001 of fifty megabytes of output, padded to fill",
    ]
    Path(path).unlink()


def test_a_short_output_keeps_no_file(tmp_path):
    result = BashTool().run({"command": "echo short"}, ToolContext(workspace=tmp_path))
    assert result.output == "short"
