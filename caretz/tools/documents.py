"""PDFs and Jupyter notebooks as the read tool shows them: as text lines, paged like any
file's (offset, limit, the output limit).

- A PDF (a file that starts with `%PDF-`) is its pages' text, as pypdf extracts it, each
  page under a `--- page N of M ---` line; a page without a text layer (a scan) says so.
  Only the pages the window needs are extracted, so the count of lines is "at least".
- A notebook (`.ipynb`) is its cells in order, each under a `# %% [cell N · kind]` line,
  a code cell followed by its outputs: text as text (a traceback without its colours),
  images as images where the model takes them (fitted like an image file), a line
  saying what was left out otherwise. Edits and writes work on the notebook's JSON.
"""

from __future__ import annotations

import binascii
import io
import os
from base64 import b64decode
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from caretz import inbound
from caretz.lazy import lazy_module
from caretz.messages import Image
from caretz.sandbox import safe_open
from caretz.tools import file_text
from caretz.tools.base import ToolContext, ToolResult
from caretz.tools.file_access import FileProblem
from caretz.tools.image_fit import ImageProblem, fit_image
from caretz.tools.output import model_text
from caretz.tools.read_window import window

if TYPE_CHECKING:
    import pypdf
else:
    # A pure-Python PDF reader (~40 ms to import): only when a PDF is read.
    pypdf = lazy_module("pypdf")

PDF_MAGIC = b"%PDF-"
MAX_DOCUMENT_BYTES = 64 << 20
MAX_NOTEBOOK_IMAGES = 8
_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def kind_of(fd: int, shown: str) -> str | None:
    """ "pdf", "notebook" or None (read the file as text)."""
    if os.pread(fd, len(PDF_MAGIC), 0) == PDF_MAGIC:
        return "pdf"
    return "notebook" if shown.lower().endswith(".ipynb") else None


def read_document(
    fd: int, size: int, shown: str, offset: int, limit: int, ctx: ToolContext
) -> tuple[ToolResult, bytes]:
    """The read tool's result for the PDF or notebook in the open file, and its bytes."""
    if size > MAX_DOCUMENT_BYTES:
        raise FileProblem(
            f"{shown} is {size:,} bytes, more than caretz reads as a document "
            f"({MAX_DOCUMENT_BYTES:,}); extract what you need with bash"
        )
    data = safe_open.read_all(fd, MAX_DOCUMENT_BYTES + 1)
    if kind_of(fd, shown) == "pdf":
        pages = _pdf_pages(data, shown)
        seen = window(pages, offset, limit, ctx.output_limit_chars, count_chars=0)
        images: list[Image] = []
        note = "[a PDF: its pages' text; edit and write do not apply to it]"
    else:
        notebook = _Notebook(data, shown, ctx)
        seen = window(notebook.pieces(), offset, limit, ctx.output_limit_chars)
        last = offset + len(seen.rows) - 1
        images = [image for line, image in notebook.images if offset <= line <= last]
        note = "[a Jupyter notebook shown as its cells; edit and write work on its JSON]"
    if seen.total == 0:
        return ToolResult(ok=True, output=f"({shown} has no text)"), data
    if not seen.rows:
        past = f"offset {offset} is past the end of {shown} ({seen.total} lines)"
        return ToolResult(ok=False, output=past), data
    output = "\n".join([*seen.rows, *seen.tail(offset), note])
    return ToolResult(ok=True, output=output, images=images), data


def _pdf_pages(data: bytes, shown: str) -> Iterator[str]:
    # pypdf logs what it repairs; a broken PDF is the result's to say, not a stray stderr
    # line. logging: loaded by pypdf anyway, and not on the way to the first request.
    import logging

    logging.getLogger("pypdf").setLevel(logging.CRITICAL)
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise FileProblem(f"{shown} is an encrypted PDF; caretz cannot read its text")
        count = len(reader.pages)
    except pypdf.errors.PyPdfError as error:
        raise FileProblem(f"{shown} is not a PDF caretz can read: {error}") from None
    for number in range(count):
        try:
            text = reader.pages[number].extract_text() or ""
        except pypdf.errors.PyPdfError as error:
            text = f"[this page's text could not be read: {error}]"
        if not text.strip():
            text = "[no text on this page: it may be a scanned image]"
        yield f"--- page {number + 1} of {count} ---\n{file_text.shown(text.rstrip())}\n"


class _Notebook:
    """A notebook's cells as text, and the images of its outputs by the line they are on."""

    def __init__(self, data: bytes, shown: str, ctx: ToolContext):
        try:
            text, _ = file_text.decode(data)
            self.doc = inbound.load_json(text, shown, limit=len(text))  # strict, bounded depth
        except (file_text.NotText, ValueError) as error:
            raise FileProblem(f"{shown} is not a notebook caretz can read: {error}") from None
        if not isinstance(self.doc, dict) or not isinstance(self.doc.get("cells"), list):
            raise FileProblem(f"{shown} is not a Jupyter notebook (it has no list of cells)")
        self.shown = shown
        self.no_images = ctx.no_images
        self.images: list[tuple[int, Image]] = []
        self.line = 1  # the line the next piece starts on

    def pieces(self) -> Iterator[str]:
        for number, cell in enumerate(self.doc["cells"], 1):
            if not isinstance(cell, dict):
                continue
            for piece in self._cell(number, cell):
                yield piece
                self.line += piece.count("\n")

    def _cell(self, number: int, cell: dict[str, Any]) -> Iterator[str]:
        kind = str(cell.get("cell_type", "cell"))
        count = cell.get("execution_count")
        run = f" · execution {count}" if isinstance(count, int) else ""
        yield f"# %% [cell {number} · {kind}{run}]\n{_joined(cell.get('source'))}\n"
        for output in cell.get("outputs") or ():
            if isinstance(output, dict):
                yield from self._output(output)

    def _output(self, output: dict[str, Any]) -> Iterator[str]:
        kind = output.get("output_type")
        if kind == "stream":
            yield f"[output: {output.get('name', 'stream')}]\n{_text(output.get('text'))}\n"
        elif kind == "error":
            trace = "\n".join(map(str, output.get("traceback") or ()))
            head = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
            yield f"[output: error]\n{_text(trace) or head}\n"
        elif kind in ("execute_result", "display_data"):
            yield from self._data(output.get("data") or {})

    def _data(self, data: dict[str, Any]) -> Iterator[str]:
        images = [kind for kind in _IMAGE_TYPES if kind in data]
        for kind in images:
            yield self._image(kind, data[kind]) + "\n"
        for kind in ("text/plain", "text/markdown", "text/html"):
            if kind in data and (kind == "text/plain" or "text/plain" not in data):
                yield f"[output: {kind}]\n{_text(data[kind])}\n"
                return
        if not images:
            yield f"[output: {', '.join(map(str, data)) or 'empty'}; not shown]\n"

    def _image(self, kind: str, encoded: Any) -> str:
        if self.no_images is not None:
            return f"[output: {kind} image; not shown: {self.no_images}]"
        if len(self.images) >= MAX_NOTEBOOK_IMAGES:
            return f"[output: {kind} image; not attached: {MAX_NOTEBOOK_IMAGES} already are]"
        try:
            fitted = fit_image(b64decode(_joined(encoded)), f"{self.shown} output")
        except (binascii.Error, ImageProblem) as problem:
            return f"[output: {kind} image; not shown: {problem or 'broken base64'}]"
        self.images.append((self.line, fitted.image))
        return f"[output: image, {fitted.describe()}; attached]"


def _joined(source: Any) -> str:
    if isinstance(source, list):
        return "".join(map(str, source))
    return "" if source is None else str(source)


def _text(value: Any) -> str:
    return file_text.shown(model_text(_joined(value))).rstrip("\n")
