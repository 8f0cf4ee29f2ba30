"""Files are read in the encoding they are in and written back in it: a mark, a declaration,
UTF-8, a detected legacy encoding, UTF-16 without a mark; what an encoding cannot hold is a
failed result naming it, and nothing the tools return holds a lone surrogate."""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest

from caretz.tools import file_text
from caretz.tools.base import ToolContext
from caretz.tools.edit_tool import EditTool, MultiEditTool
from caretz.tools.file_reads import FileReads
from caretz.tools.files import ReadTool, WriteTool

# A keymap-like text with Latin-1 letters on many lines, as the kernel's defkeymap.map is,
# its comments in the languages that use them.
ACCENTED = "àáâãäåæçèéêëìíîïðñòóôõöøùúûüýþÿ"
WORDS = "café crème brûlée Grüße Straße naïve façade déjà über Mädchen señor niño São Øresund"
KEYMAP = "".join(
    f"compose '{'aeiouy'[n % 6]}' '{chr(0x60 + n % 26)}' to '{ACCENTED[n % len(ACCENTED)]}'"
    f"  # {WORDS.split()[n % 14]} #{n}\n"
    for n in range(300)
)
FIRST, EIGHTH = KEYMAP.splitlines()[0], KEYMAP.splitlines()[7]  # ...'à'  # café #0, ...'ç'


@pytest.fixture
def tools(tmp_path: Path):
    reads = FileReads()
    ctx = ToolContext(workspace=tmp_path)

    def call(tool: type, **args: object):
        return tool(reads).run(dict(args), ctx)

    return call


@pytest.mark.parametrize(
    ("data", "codec", "how"),
    [
        (codecs.BOM_UTF8 + "é\n".encode(), "utf-8", "mark"),
        (codecs.BOM_UTF16_LE + "é\n".encode("utf-16-le"), "utf-16-le", "mark"),
        (codecs.BOM_UTF16_BE + "é\n".encode("utf-16-be"), "utf-16-be", "mark"),
        (codecs.BOM_UTF32_LE + "é\n".encode("utf-32-le"), "utf-32-le", "mark"),
        ("# -*- coding: latin-1 -*-\nname = 'é'\n".encode("latin-1"), "iso8859-1", "declared"),
        (
            '<?xml version="1.0" encoding="ISO-8859-15"?>\n<a>€</a>\n'.encode("iso8859-15"),
            "iso8859-15",
            "declared",
        ),
        (
            '<html><head><meta charset="windows-1251"></head>Привет</html>'.encode("cp1251"),
            "cp1251",
            "declared",
        ),
        ("naïve — ok\n".encode(), "utf-8", "utf-8"),
        (KEYMAP.encode("latin-1"), "cp1252", "detected"),
        (("Привет, как дела? " * 20).encode("cp1251"), "cp1251", "detected"),
        ("line one\r\nzweite Zeile: Grüße\r\n".encode("utf-16-le"), "utf-16-le", "detected"),
    ],
)
def test_the_encoding_is_what_the_bytes_say(data, codec, how):
    text, encoding = file_text.decode(data)
    assert (encoding.codec, encoding.how) == (codec, how)
    assert file_text.encode(text, encoding, "f") == data  # read back byte for byte


def test_nul_bytes_outside_utf16_are_binary():
    for data in (b"\x89PNG\x00\x01", b"ELF\x00\x00\x02\x01" * 100, bytes(range(256)) * 4):
        with pytest.raises(file_text.NotText):
            file_text.sniff(data)


def test_a_declaration_the_bytes_do_not_fit_or_only_quoted_is_not_followed():
    data = "# coding: ascii\nname = 'é'\n".encode()  # says ASCII, holds UTF-8
    assert file_text.sniff(data) == file_text.UTF8
    code = 'PAGE = \'<meta charset="iso-8859-1">\'\nname = "café"\n'.encode()
    assert file_text.sniff(code) == file_text.UTF8  # code that quotes a page
    config = "encoding: latin-1\nname: café\n".encode()
    assert file_text.sniff(config) == file_text.UTF8  # a setting, not a comment
    vim = '// vim: set fileencoding=latin1 :\nchar *s = "Grüße";\n'.encode("latin-1")
    assert file_text.sniff(vim).how == "declared"


def test_a_latin1_file_is_read_edited_both_ways_and_written_back_as_latin1(tools, tmp_path):
    path = tmp_path / "keymap.map"
    path.write_bytes(KEYMAP.encode("latin-1"))

    read = tools(ReadTool, path="keymap.map")
    assert read.ok and f"     1\t{FIRST}" in read.output
    assert read.output.endswith("edit and write keep that encoding]")
    # Accented text in, and accented text out, in one file: still one encoding.
    added = tools(EditTool, path="keymap.map", old_string=FIRST, new_string="to 'é' # é")
    assert added.ok and "Note: keymap.map is CP1252 (detected) text" in added.output
    gone = tools(
        MultiEditTool,
        path="keymap.map",
        edits=[{"old_string": EIGHTH, "new_string": EIGHTH.replace("ç", "c")}],
    )
    assert gone.ok, gone.output
    data = path.read_bytes()
    text = data.decode("latin-1")
    assert text.startswith("to 'é' # é\n") and EIGHTH.replace("ç", "c") in text
    assert b"\xc3" not in data  # no UTF-8 anywhere in it
    assert "+to 'é' # é" in added.diff

    rewritten = tools(WriteTool, path="keymap.map", content=text.replace("compose", "Compose"))
    assert rewritten.ok and "(CP1252 (detected), as it was)" in rewritten.output
    assert path.read_bytes() == text.replace("compose", "Compose").encode("latin-1")


def test_text_the_encoding_cannot_hold_is_refused_and_the_file_unchanged(tools, tmp_path):
    path = tmp_path / "keymap.map"
    path.write_bytes(KEYMAP.encode("latin-1"))
    tools(ReadTool, path="keymap.map")

    result = tools(EditTool, path="keymap.map", old_string=FIRST, new_string="to 'Ω'")
    assert not result.ok
    assert result.output == (
        "Not changed: keymap.map is CP1252 (detected) text, which cannot hold 'Ω' (U+03A9) "
        "(line 1 of the new text). Write it the way the file's format allows (an escape or "
        "an entity), or convert the file to UTF-8 first (iconv in bash) if that is wanted"
    )
    assert path.read_bytes() == KEYMAP.encode("latin-1")
    written = tools(WriteTool, path="keymap.map", content="→\n")
    assert not written.ok and "cannot hold '→' (U+2192)" in written.output


def test_a_utf16_file_with_a_mark_and_crlf_keeps_all_three(tools, tmp_path):
    text = "".join(f"Key{n}=Wert {n}\r\n" for n in range(200))
    path = tmp_path / "strings.rc"
    path.write_bytes(codecs.BOM_UTF16_LE + text.encode("utf-16-le"))

    read = tools(ReadTool, path="strings.rc")
    assert read.ok and "     2\tKey1=Wert 1" in read.output
    assert "UTF-16-LE with a byte-order mark" in read.output
    edited = tools(
        EditTool, path="strings.rc", old_string="Key1=Wert 1\n", new_string="Key1=Grüße\n"
    )
    assert edited.ok, edited.output
    written = tools(WriteTool, path="strings.rc", content="Eins=ü\nZwei=ß\n")
    assert written.ok, written.output
    assert path.read_bytes() == codecs.BOM_UTF16_LE + "Eins=ü\r\nZwei=ß\r\n".encode("utf-16-le")
    assert "+Key1=Grüße" in edited.diff


def test_undecodable_bytes_are_kept_and_never_leave_as_surrogates(tools, tmp_path):
    # Mostly UTF-8 with stray bytes no encoding explains: read as UTF-8, the bytes kept.
    data = ("été\n" * 50).encode() + b"\xff\xfe\xfd bad\n" + b"value = 1\n"
    path = tmp_path / "mixed.txt"
    path.write_bytes(data)
    _, encoding = file_text.decode(data)
    assert encoding.how == "undecodable"

    read = tools(ReadTool, path="mixed.txt")
    edited = tools(EditTool, path="mixed.txt", old_string="value = 1", new_string="value = é")
    missed = tools(EditTool, path="mixed.txt", old_string="\udcff\udcfe bad!", new_string="x")

    assert edited.ok and path.read_bytes() == data.replace(b"value = 1", "value = é".encode())
    for result in (read, edited, missed):
        json.dumps(result.output).encode("utf-8")  # no lone surrogate anywhere
        (result.diff or "").encode("utf-8")
    assert "\ufffd\ufffd\ufffd bad" in read.output


def test_a_file_changed_on_disk_shows_its_change_in_its_own_encoding(tools, tmp_path):
    path = tmp_path / "keymap.map"
    path.write_bytes(KEYMAP.encode("latin-1"))
    tools(ReadTool, path="keymap.map")
    path.write_bytes(KEYMAP.replace(FIRST, FIRST.replace("à", "ü")).encode("latin-1"))

    refused = tools(EditTool, path="keymap.map", old_string=FIRST, new_string="x")
    assert not refused.ok and f"+{FIRST.replace('à', 'ü')}" in refused.output
