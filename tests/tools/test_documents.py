"""The read tool on a PDF (its pages' text) and a Jupyter notebook (its cells with their
outputs: text as text, images as images where the model takes them)."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

from caretz.tools.base import ToolContext
from caretz.tools.edit_tool import EditTool
from caretz.tools.file_reads import FileReads
from caretz.tools.files import ReadTool
from tests.pictures import png


def a_pdf(pages: list[str]) -> bytes:
    """A PDF of one text line per page, written by hand (Helvetica, no library)."""
    objects = ["<< /Type /Catalog /Pages 2 0 R >>", ""]
    kids = []
    for text in pages:
        stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode("latin-1")
        content = len(objects) + 2
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content} 0 R "
            "/Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>"
        )
        objects.append(
            f"<< /Length {len(stream)} >>\nstream\n{stream.decode('latin-1')}\nendstream"
        )
        kids.append(f"{len(objects) - 1} 0 R")
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(pages)} >>"
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{offset:010d} 00000 n \n" for offset in offsets).encode()
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    return bytes(out)


def test_a_pdf_is_read_as_its_pages_text_a_window_at_a_time(tmp_path: Path):
    pages = [f"Chapter {n}: the register map of block {n}" for n in range(1, 41)]
    (tmp_path / "manual.pdf").write_bytes(a_pdf(pages))
    read = ReadTool()
    ctx = ToolContext(workspace=tmp_path)

    first = read.run({"path": "manual.pdf", "limit": 6}, ctx)
    later = read.run({"path": "manual.pdf", "offset": 77, "limit": 4}, ctx)

    assert first.ok, first.output
    assert first.output.splitlines()[:4] == [
        "     1\t--- page 1 of 40 ---",
        "     2\tChapter 1: the register map of block 1",
        "     3\t--- page 2 of 40 ---",
        "     4\tChapter 2: the register map of block 2",
    ]
    assert re.search(r"\[lines 1–6 of at least \d+; offset=7 for more\]", first.output)
    assert first.output.endswith("[a PDF: its pages' text; edit and write do not apply to it]")
    assert "    78\tChapter 39: the register map of block 39" in later.output


def test_a_broken_pdf_is_a_failed_result_naming_it(tmp_path: Path, capfd):
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not a PDF body\n")
    result = ReadTool().run({"path": "broken.pdf"}, ToolContext(workspace=tmp_path))
    assert not result.ok
    assert result.output.startswith("broken.pdf is not a PDF caretz can read: ")
    assert capfd.readouterr().err == ""  # pypdf's repairs are not printed


def notebook() -> dict:
    image = base64.b64encode(png(40, 30)).decode()
    return {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "language": "python"}},
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# Loss curves\n", "Über alles."]},
            {
                "cell_type": "code",
                "execution_count": 3,
                "metadata": {},
                "source": ["import math\n", "print(math.pi)\n", "math.e"],
                "outputs": [
                    {"output_type": "stream", "name": "stdout", "text": ["3.141592653589793\n"]},
                    {
                        "output_type": "execute_result",
                        "execution_count": 3,
                        "metadata": {},
                        "data": {"text/plain": ["2.718281828459045"]},
                    },
                ],
            },
            {
                "cell_type": "code",
                "execution_count": 4,
                "metadata": {},
                "source": "plot(losses)",
                "outputs": [
                    {
                        "output_type": "display_data",
                        "metadata": {},
                        "data": {"image/png": image, "text/plain": ["<Figure size 640x480>"]},
                    },
                    {
                        "output_type": "error",
                        "ename": "ValueError",
                        "evalue": "bad",
                        "traceback": ["\u001b[0;31mValueError\u001b[0m: bad"],
                    },
                ],
            },
        ],
    }


def test_a_notebook_is_read_as_cells_with_outputs_and_its_images(tmp_path: Path):
    (tmp_path / "train.ipynb").write_text(json.dumps(notebook(), indent=1))
    reads = FileReads()

    seen = ReadTool(reads).run({"path": "train.ipynb"}, ToolContext(workspace=tmp_path))
    text_only = ReadTool().run(
        {"path": "train.ipynb"}, ToolContext(workspace=tmp_path, no_images="m is text-only")
    )

    assert seen.ok, seen.output
    lines = [line.split("\t", 1)[1] for line in seen.output.splitlines()[:-1]]
    assert lines == [
        "# %% [cell 1 · markdown]",
        "# Loss curves",
        "Über alles.",
        "# %% [cell 2 · code · execution 3]",
        "import math",
        "print(math.pi)",
        "math.e",
        "[output: stdout]",
        "3.141592653589793",
        "[output: text/plain]",
        "2.718281828459045",
        "# %% [cell 3 · code · execution 4]",
        "plot(losses)",
        "[output: image, PNG, 40×30, 100 bytes; attached]",
        "[output: text/plain]",
        "<Figure size 640x480>",
        "[output: error]",
        "ValueError: bad",
    ]
    assert [image.media_type for image in seen.images] == ["image/png"]
    assert "[output: image/png image; not shown: m is text-only]" in text_only.output
    assert not text_only.images
    # Read, so its JSON may be edited.
    edit = {"path": "train.ipynb", "old_string": '"plot(losses)"', "new_string": '"plot(loss)"'}
    assert EditTool(reads).run(edit, ToolContext(workspace=tmp_path)).ok
