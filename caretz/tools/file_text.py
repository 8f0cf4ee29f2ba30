"""How a file's bytes are text and back: the one place the file tools decode and encode.

A file's encoding is decided once, from its bytes, in this order:

1. a byte-order mark: UTF-8, UTF-16 or UTF-32 (little or big endian);
2. a declaration at its top: a `coding:` line (Python's PEP 263, Emacs, vim) in the first
   two lines, an XML declaration's `encoding`, an HTML `<meta charset>`, honoured when the
   bytes decode with it and read back byte for byte;
3. UTF-8, when every byte decodes as UTF-8;
4. what charset-normalizer (a maintained detector, imported only here and only then)
   finds: a legacy encoding such as ISO-8859-1, cp1252, KOI8-R or Shift-JIS, or UTF-16
   without a mark; again only when the text reads back byte for byte;
5. otherwise UTF-8 with each undecodable byte kept as it was (surrogateescape), so an edit
   leaves them untouched; the model sees U+FFFD in their place.

A file with a NUL byte in its first 8 KB that is not UTF-16 or UTF-32 is binary (git's
rule). Text is written back in the encoding it was read in, its mark included; its line
endings are the text's own (an edit changes none it does not touch, and a write of an
existing CRLF file keeps CRLF). A character the encoding cannot hold is a `FileProblem`
naming the encoding: the file is not changed. Nothing that leaves here for the model holds
a lone surrogate (`shown`).
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from caretz.lazy import lazy_module
from caretz.tools.file_access import FileProblem

if TYPE_CHECKING:
    import charset_normalizer
else:
    # The detector and its tables (~30 ms): only for bytes that are neither UTF-8 nor marked.
    charset_normalizer = lazy_module("charset_normalizer")

# Git's rule: a NUL byte in the first 8 KB means binary.
BINARY_SNIFF_BYTES = 8192
# How much of a file's start a declaration may sit in.
DECLARATION_BYTES = 4096
# The marks, longest first: UTF-32 LE's starts like UTF-16 LE's.
_MARKS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# A comment's `coding:` (Python's PEP 263, Emacs's -*- coding -*-, vim's fileencoding=).
_CODING_LINE = re.compile(
    rb"^[ \t\f]*(?:#|//|/\*|;|%|--|<!--|\.\.)[^\n]*?coding[:=][ \t]*([-\w.]+)", re.MULTILINE
)
_XML_DECLARATION = re.compile(rb"""\A\s*<\?xml[^>]*?\bencoding\s*=\s*["']([-\w.:]+)["']""")
_HTML_META = re.compile(rb"""<meta[^>]+?charset\s*=\s*["']?([-\w.:]+)""", re.IGNORECASE)
_SURROGATES = re.compile("[\ud800-\udfff]")
# When the detector cannot tell encodings apart (their "chaos" within this of the least, the
# same coherence: a short text, a mix of languages), the most widely used of them wins.
CHAOS_TIE = 0.05
_COMMON = [
    "cp1252",
    "iso8859-1",
    "iso8859-15",
    "cp1250",
    "iso8859-2",
    "cp1251",
    "koi8-r",
    "cp866",
    "cp932",
    "shift_jis",
    "euc_jp",
    "gb18030",
    "gbk",
    "big5",
    "cp949",
    "euc_kr",
    "cp1253",
    "iso8859-7",
    "cp1254",
    "cp1255",
    "cp1256",
    "cp1257",
    "cp874",
]


class NotText(Exception):
    """The bytes are binary, not text in any encoding caretz reads."""


@dataclass(frozen=True)
class Encoding:
    """How a file's text is stored: a Python codec, the mark before it, how it was known."""

    codec: str  # codecs.lookup's name: "utf-8", "utf-16-le", "iso8859-1", "cp1252"...
    bom: bytes = b""
    how: str = "utf-8"  # "mark", "declared", "utf-8", "detected" or "undecodable"

    @property
    def errors(self) -> str:
        return "surrogateescape" if self.how == "undecodable" else "strict"

    @property
    def is_plain_utf8(self) -> bool:
        return self.codec == "utf-8" and not self.bom and self.how in ("utf-8", "declared")

    @property
    def label(self) -> str:
        """The encoding as people read it: `ISO-8859-1 (declared)`, `UTF-16-LE with a BOM`."""
        name = self.codec.upper().replace("ISO8859", "ISO-8859")
        if self.bom:
            return f"{name} with a byte-order mark"
        if self.how == "undecodable":
            return "UTF-8 with bytes that are not UTF-8"
        return f"{name} ({self.how})" if self.how in ("declared", "detected") else name


UTF8 = Encoding("utf-8")


def sniff(data: bytes, *, complete: bool = True) -> Encoding:
    """The encoding of a file whose bytes are (or, `complete` False, begin with) `data`.
    Raises NotText for a binary file."""
    for mark, codec in _MARKS:
        if data.startswith(mark):
            return Encoding(codec, mark, "mark")
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        wide = _utf16_without_mark(data, complete)
        if wide is None:
            raise NotText()  # NUL bytes are text only in UTF-16 and UTF-32
        return Encoding(wide, b"", "detected")
    declared = _declared(data)
    if declared is not None and _reads_back(data, declared, complete):
        return Encoding(declared, b"", "declared")
    if _reads_back(data, "utf-8", complete):
        return UTF8
    detected = None if _mostly_utf8(data) else _detected(data, complete)
    if detected is not None:
        return Encoding(detected, b"", "detected")
    return Encoding("utf-8", b"", "undecodable")


def decode(data: bytes) -> tuple[str, Encoding]:
    """A whole file's text and its encoding; raises NotText for a binary file."""
    encoding = sniff(data)
    body = data[len(encoding.bom) :]
    return body.decode(encoding.codec, encoding.errors), encoding


def encode(text: str, encoding: Encoding, shown: str) -> bytes:
    """`text` as the file's bytes in `encoding`, its mark first; raises FileProblem naming
    the encoding (and the first character it cannot hold) when it cannot hold the text."""
    try:
        return encoding.bom + text.encode(encoding.codec, encoding.errors)
    except UnicodeEncodeError as error:
        character = error.object[error.start]
        line = text.count("\n", 0, error.start) + 1
        raise FileProblem(
            f"Not changed: {shown} is {encoding.label} text, which cannot hold "
            f"{shown_char(character)} (line {line} of the new text). Write it the way the "
            "file's format allows (an escape or an entity), or convert the file to UTF-8 "
            "first (iconv in bash) if that is wanted"
        ) from None


def shown_char(character: str) -> str:
    if _SURROGATES.match(character):
        return f"a byte that is not {character!r}"
    return f"{character!r} (U+{ord(character):04X})"


def decoder(encoding: Encoding) -> codecs.IncrementalDecoder:
    """A decoder for reading the file a piece at a time (its mark already skipped); what
    does not decode shows as U+FFFD."""
    return codecs.getincrementaldecoder(encoding.codec)(errors="replace")


def shown(text: str) -> str:
    """`text` as a model or a person may read it: undecodable bytes kept by
    surrogateescape (and any other lone surrogate) become U+FFFD."""
    return _SURROGATES.sub("\ufffd", text) if _has_surrogates(text) else text


def _has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def row_text(raw: bytes) -> str:
    """A line a search printed (rg gives UTF-8, or a file's own bytes), for the model."""
    return raw.decode("utf-8", "replace")


def is_utf8(raw: bytes) -> bool:
    if raw.isascii():
        return True
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def line_text(raw: bytes, encoding: Encoding) -> str:
    """One line of a file's bytes in the file's encoding (not a wide one: rg gives those
    as UTF-8), for the model."""
    codec = "utf-8" if encoding.codec.startswith(("utf-16", "utf-32")) else encoding.codec
    return raw.decode(codec, "replace")


def fragment_text(raw: bytes, *, whole_start: bool) -> str:
    """Bytes cut out of the middle of a UTF-8 line, as text: a character cut at either end
    is left out (unless the cut is the line's start, `whole_start`)."""
    if not whole_start:
        skipped = 0
        while skipped < 3 and skipped < len(raw) and 0x80 <= raw[skipped] < 0xC0:
            skipped += 1
        raw = raw[skipped:]
    return shown(codecs.getincrementaldecoder("utf-8")("replace").decode(raw, final=False))


def file_newlines(text: str) -> str | None:
    """ "\\r\\n" when every line break of `text` is CRLF, "\\n" when none is, None: mixed."""
    crlf = text.count("\r\n")
    if not crlf:
        return "\n"
    return "\r\n" if crlf == text.count("\n") else None


def with_newlines_of(content: str, existing: str) -> str:
    """A write's `content` with the line breaks of the file it replaces: a CRLF file stays
    CRLF when the new text uses plain "\\n" throughout."""
    if file_newlines(existing) == "\r\n" and "\r" not in content:
        return content.replace("\n", "\r\n")
    return content


def _declared(data: bytes) -> str | None:
    """The ASCII-compatible encoding the file's first lines declare, if any."""
    head = data[:DECLARATION_BYTES]
    found = _XML_DECLARATION.match(head)
    if found is None and head.lstrip().startswith(b"<"):  # a document, not code quoting one
        found = _HTML_META.search(head)
    if found is None:
        first_two = b"\n".join(head.split(b"\n", 2)[:2])
        found = _CODING_LINE.search(first_two)
    if found is None:
        return None
    try:
        codec = codecs.lookup(found.group(1).decode("ascii")).name
    except (LookupError, UnicodeDecodeError):
        return None
    # A declaration read as ASCII cannot be declaring UTF-16 or UTF-32 (those need a mark).
    ascii_compatible = "utf-16" not in codec and "utf-32" not in codec
    return codec if ascii_compatible else None


def _reads_back(data: bytes, codec: str, complete: bool) -> bool:
    """Whether `data` decodes in `codec` without a fault and encodes back to itself."""
    try:
        text = codecs.getincrementaldecoder(codec)("strict").decode(data, final=complete)
    except UnicodeDecodeError:
        return False
    if codec == "utf-8":
        return True
    return data.startswith(text.encode(codec))


def _mostly_utf8(data: bytes) -> bool:
    """UTF-8 with a few stray bytes (a log with one Latin-1 line): at least as many
    characters written as UTF-8's multi-byte sequences as bytes that are not UTF-8."""
    text = data.decode("utf-8", "surrogateescape")
    stray = len(_SURROGATES.findall(text))
    non_ascii = len(text) - len(text.encode("ascii", "ignore"))
    return non_ascii - stray >= stray


def _detected(data: bytes, complete: bool) -> str | None:
    """The legacy encoding charset-normalizer finds for `data`, asked first among the widely
    used ones (then among all it knows), when the text reads back byte for byte. Encodings
    it can hardly tell apart (a short text, a mix of languages) go to the one whose text
    reads most like a language, then to the most widely used."""
    for candidates in (_COMMON, None):
        found = []
        for match in charset_normalizer.from_bytes(data, cp_isolation=candidates):
            # A match names the encodings that read the bytes as the very same text.
            for name in match.could_be_from_charset:
                codec = _codec(name)
                if codec is not None and _reads_back(data, codec, complete):
                    found.append((match.chaos, match.coherence, codec))
        if found:
            return _likeliest(found)
    return None


def _codec(name: str) -> str | None:
    try:
        codec = codecs.lookup(name).name
    except LookupError:
        return None
    # Wide encodings without a mark are told by their NUL bytes (_utf16_without_mark).
    return None if codec.startswith(("utf-16", "utf-32")) else codec


def _likeliest(found: list[tuple[float, float, str]]) -> str:
    least = min(chaos for chaos, _, _ in found)
    near = [(coherence, codec) for chaos, coherence, codec in found if chaos <= least + CHAOS_TIE]
    most = max(coherence for coherence, _ in near)
    tied = [codec for coherence, codec in near if coherence == most]
    return min(tied, key=lambda codec: _COMMON.index(codec) if codec in _COMMON else len(_COMMON))


def _utf16_without_mark(data: bytes, complete: bool) -> str | None:
    """UTF-16 without a byte-order mark, told by its NUL bytes: text mostly in the first 256
    code points has a NUL in every other byte, all on one side (the high byte's), and reads
    as printable text."""
    sample = data[:BINARY_SNIFF_BYTES] if complete else data[: BINARY_SNIFF_BYTES & ~1]
    even, odd = sample[0::2].count(0), sample[1::2].count(0)
    units = len(sample) // 2
    if not units or (even and odd) or (even + odd) * 4 < units:
        return None
    codec = "utf-16-le" if odd else "utf-16-be"
    text = sample[: units * 2].decode(codec, "replace")
    if not all(ch.isprintable() or ch in "\t\n\r\f" for ch in text):
        return None
    return codec if _reads_back(data, codec, complete) else None
