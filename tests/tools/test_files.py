from __future__ import annotations

import os
from pathlib import Path

import pytest

from caretz.tools.base import ToolArgumentError, ToolContext
from caretz.tools.edit_tool import EditTool
from caretz.tools.files import ReadTool, WriteTool
from caretz.tools.result_cap import MAX_RESULT_CHARS


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path)


def numbered(n: int) -> str:
    return "".join(f"line {i}\n" for i in range(1, n + 1))


# read


def test_read_numbers_lines_like_cat_n(ctx, tmp_path):
    (tmp_path / "f.txt").write_text("first\nsecond\n")
    result = ReadTool().run({"path": "f.txt"}, ctx)
    assert result.ok
    assert result.output == "     1\tfirst\n     2\tsecond"


def test_read_absolute_path(ctx, tmp_path):
    (tmp_path / "f.txt").write_text("x\n")
    result = ReadTool().run({"path": str(tmp_path / "f.txt")}, ctx)
    assert result.output == "     1\tx"


def test_read_range_and_note_for_remaining_lines(ctx, tmp_path):
    (tmp_path / "f.txt").write_text(numbered(10))
    result = ReadTool().run({"path": "f.txt", "offset": 3, "limit": 4}, ctx)
    assert result.output.splitlines() == [
        "     3\tline 3",
        "     4\tline 4",
        "     5\tline 5",
        "     6\tline 6",
        "[lines 3–6 of 10; offset=7 for more]",
    ]


def test_read_default_limit_is_2000_lines(tmp_path):
    ctx = ToolContext(workspace=tmp_path, output_limit_chars=1_000_000)
    (tmp_path / "f.txt").write_text(numbered(2005))
    result = ReadTool().run({"path": "f.txt"}, ctx)
    lines = result.output.splitlines()
    assert lines[-2] == "  2000\tline 2000"
    assert lines[-1] == "[lines 1–2000 of 2005; offset=2001 for more]"


def test_read_shows_2000_ordinary_lines_in_one_call(tmp_path):
    """Under the largest cap (a large window, an empty context), 2000 lines of code-like
    length come in one call."""
    ctx = ToolContext(workspace=tmp_path, output_limit_chars=MAX_RESULT_CHARS)
    (tmp_path / "f.py").write_text(
        "".join(f"    value_{n} = compute(value_{n - 1})\n" for n in range(3000))
    )
    lines = ReadTool().run({"path": "f.py"}, ctx).output.splitlines()
    assert len(lines) == 2001 and lines[-2].startswith("  2000\t")
    assert lines[-1] == "[lines 1–2000 of 3000; offset=2001 for more]"


def test_read_stops_at_its_character_budget_and_says_where_to_go_on(tmp_path):
    ctx = ToolContext(workspace=tmp_path, output_limit_chars=MAX_RESULT_CHARS)
    (tmp_path / "f.txt").write_text(("y" * 150 + "\n") * 2000)
    result = ReadTool().run({"path": "f.txt"}, ctx)
    last_shown = int(result.output.splitlines()[-2].split("\t")[0])
    assert 500 < last_shown < 600 and len(result.output) <= MAX_RESULT_CHARS + 200
    assert result.output.splitlines()[-1] == (
        f"[lines 1–{last_shown} of 2000 (the output limit of {MAX_RESULT_CHARS:,} characters); "
        f"offset={last_shown + 1} for more]"
    )


def test_read_cuts_very_long_lines(ctx, tmp_path):
    (tmp_path / "f.txt").write_text("x" * 2500 + "\nshort\n")
    lines = ReadTool().run({"path": "f.txt"}, ctx).output.splitlines()
    assert lines[0] == "     1\t" + "x" * 2000 + " [... 500 more characters on this line]"
    assert lines[1] == "     2\tshort"


def test_read_strips_crlf(ctx, tmp_path):
    (tmp_path / "f.txt").write_bytes(b"a\r\nb\r\n")
    assert ReadTool().run({"path": "f.txt"}, ctx).output == "     1\ta\n     2\tb"


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda p: None, "File not found: f.txt"),
        (lambda p: p.mkdir(), "f.txt is a directory"),
        (lambda p: p.write_bytes(b"\x89PNG\x00\x01"), "binary"),
    ],
)
def test_read_failures_say_what_is_wrong(ctx, tmp_path, setup, message):
    setup(tmp_path / "f.txt")
    result = ReadTool().run({"path": "f.txt"}, ctx)
    assert not result.ok
    assert message in result.output


def test_read_offset_past_end_fails(ctx, tmp_path):
    (tmp_path / "f.txt").write_text(numbered(3))
    result = ReadTool().run({"path": "f.txt", "offset": 9}, ctx)
    assert not result.ok
    assert "offset 9 is past the end of f.txt (3 lines)" in result.output


def test_read_empty_file(ctx, tmp_path):
    (tmp_path / "f.txt").write_text("")
    result = ReadTool().run({"path": "f.txt"}, ctx)
    assert result.ok
    assert "empty" in result.output


def test_read_offset_zero_is_an_argument_error(ctx, tmp_path):
    (tmp_path / "f.txt").write_text("x\n")
    with pytest.raises(ToolArgumentError, match="offset"):
        ReadTool().run({"path": "f.txt", "offset": 0}, ctx)


def test_unreadable_file_is_a_failed_result_not_a_crash(ctx, tmp_path):
    target = tmp_path / "locked.txt"
    if os.geteuid() == 0:
        # root reads any mode; /proc/self/mem fails its first read with EIO instead
        target.symlink_to("/proc/self/mem")
        reason = "Input/output error"
    else:
        target.write_text("secret\n")
        target.chmod(0)
        reason = "Permission denied"
    try:
        result = ReadTool().run({"path": "locked.txt"}, ctx)
    finally:
        if not target.is_symlink():
            target.chmod(0o644)
    assert not result.ok
    assert result.output.startswith(f"Cannot read locked.txt: {reason}")


# write


def test_write_creates_parent_dirs(ctx, tmp_path):
    result = WriteTool().run({"path": "sub/dir/f.py", "content": "a = 1\nb = 2\n"}, ctx)
    assert result.ok
    assert result.output == "Wrote 2 lines to sub/dir/f.py"
    assert result.files_changed == ["sub/dir/f.py"]
    assert (tmp_path / "sub/dir/f.py").read_text() == "a = 1\nb = 2\n"


def test_write_overwrites_and_diffs(ctx, tmp_path):
    (tmp_path / "f.py").write_text("old\n")
    result = WriteTool().run({"path": "f.py", "content": "new\n"}, ctx)
    assert (tmp_path / "f.py").read_text() == "new\n"
    assert "-old\n" in result.diff and "+new\n" in result.diff


def test_write_outside_workspace_reports_absolute_path(ctx, tmp_path_factory):
    target = tmp_path_factory.mktemp("elsewhere") / "f.txt"
    result = WriteTool().run({"path": str(target), "content": "x"}, ctx)
    assert result.output == f"Wrote 1 line to {target}"
    assert result.files_changed == [str(target)]


def test_write_where_a_parent_is_a_file_fails(ctx, tmp_path):
    (tmp_path / "plain").write_text("x")
    result = WriteTool().run({"path": "plain/f.txt", "content": "y"}, ctx)
    assert not result.ok
    assert result.output.startswith("Cannot write plain/f.txt: ")


def test_write_onto_a_directory_fails(ctx, tmp_path):
    (tmp_path / "d").mkdir()
    result = WriteTool().run({"path": "d", "content": "x"}, ctx)
    assert not result.ok
    assert "directory" in result.output


# edit


def test_edit_one_match(ctx, tmp_path):
    (tmp_path / "f.py").write_text("def f():\n    return 1\n")
    args = {"path": "f.py", "old_string": "return 1", "new_string": "return 2"}
    result = EditTool().run(args, ctx)
    assert result.ok
    assert result.output == "Edited f.py: 1 replacement"
    assert result.files_changed == ["f.py"]
    assert (tmp_path / "f.py").read_text() == "def f():\n    return 2\n"
    assert result.diff.startswith("--- a/f.py\n+++ b/f.py\n")
    assert "-    return 1\n+    return 2\n" in result.diff


def test_edit_zero_matches_fails_and_leaves_file(ctx, tmp_path):
    (tmp_path / "f.py").write_text("x = 1\n")
    result = EditTool().run({"path": "f.py", "old_string": "y = 1", "new_string": "y = 2"}, ctx)
    assert not result.ok
    assert result.output.startswith("old_string not found in f.py. The closest text is lines 1–1")
    assert "     1\tx = 1" in result.output
    assert (tmp_path / "f.py").read_text() == "x = 1\n"


def test_edit_zero_matches_hints_at_whitespace(ctx, tmp_path):
    (tmp_path / "f.py").write_text("if x:\n\treturn 1\n")
    args = {"path": "f.py", "old_string": "if x:\n    return 1", "new_string": "pass"}
    result = EditTool().run(args, ctx)
    assert not result.ok
    assert result.output.startswith("old_string not found in f.py. The closest text is lines 1–2")
    assert (
        "     2\t\treturn 1" in result.output and "What differs: whitespace only" in result.output
    )


def test_edit_many_matches_needs_context_or_replace_all(ctx, tmp_path):
    (tmp_path / "f.py").write_text("a = 0\na = 0\na = 0\n")
    args = {"path": "f.py", "old_string": "a = 0", "new_string": "a = 1"}
    result = EditTool().run(args, ctx)
    assert not result.ok
    assert result.output == (
        "old_string matches 3 places in f.py (starting on lines 1, 2, 3); add more surrounding "
        "context to make it unique, or set replace_all to change every one"
    )
    assert (tmp_path / "f.py").read_text() == "a = 0\na = 0\na = 0\n"

    result = EditTool().run({**args, "replace_all": True}, ctx)
    assert result.ok
    assert result.output == "Edited f.py: 3 replacements"
    assert (tmp_path / "f.py").read_text() == "a = 1\na = 1\na = 1\n"


def test_edit_same_strings_fails(ctx, tmp_path):
    (tmp_path / "f.py").write_text("x\n")
    result = EditTool().run({"path": "f.py", "old_string": "x", "new_string": "x"}, ctx)
    assert not result.ok
    assert "same" in result.output


def test_edit_missing_file_fails(ctx):
    result = EditTool().run({"path": "nope.py", "old_string": "a", "new_string": "b"}, ctx)
    assert not result.ok
    assert "File not found: nope.py" in result.output


def test_edit_crlf_file_with_lf_strings_keeps_crlf(ctx, tmp_path):
    (tmp_path / "f.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    args = {"path": "f.txt", "old_string": "one\ntwo", "new_string": "1\n2"}
    result = EditTool().run(args, ctx)
    assert result.ok
    assert (tmp_path / "f.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


def test_edit_keeps_undecodable_bytes_elsewhere(ctx, tmp_path):
    (tmp_path / "f.txt").write_bytes(b"caf\xe9\nvalue = 1\n")
    args = {"path": "f.txt", "old_string": "value = 1", "new_string": "value = 2"}
    assert EditTool().run(args, ctx).ok
    assert (tmp_path / "f.txt").read_bytes() == b"caf\xe9\nvalue = 2\n"


# read: images


def test_read_returns_an_image_file_as_an_image(ctx, tmp_path):
    from tests.pictures import png

    data = png(64, 48)
    (tmp_path / "shot.png").write_bytes(data)
    result = ReadTool().run({"path": "shot.png", "offset": 5}, ctx)  # offset means nothing here
    assert result.ok
    assert result.output == f"Image shot.png (PNG, 64×48, {len(data)} bytes)"
    [image] = result.images
    assert (image.media_type, image.data, image.width, image.height) == ("image/png", data, 64, 48)
    assert result.to_dict()["images"] == [image.ref()]


def test_read_scales_a_large_image_down(ctx, tmp_path):
    from tests.pictures import decoded, picture

    (tmp_path / "photo.jpg").write_bytes(picture(3136, 2000))
    result = ReadTool().run({"path": "photo.jpg"}, ctx)
    assert result.ok and "JPEG, 3136×2000" in result.output
    assert "resized to JPEG 1568×1000" in result.output
    assert decoded(result.images[0].data).size == (1568, 1000)


def test_read_of_an_image_for_a_text_only_model_fails_with_the_reason(tmp_path):
    from tests.pictures import png

    (tmp_path / "shot.png").write_bytes(png(8, 8))
    ctx = ToolContext(workspace=tmp_path, no_images="model groq/gpt-oss-120b does not take images")
    result = ReadTool().run({"path": "shot.png"}, ctx)
    assert not result.ok and result.images == []
    assert result.output.startswith("Image shot.png (PNG, 8×8, ")
    assert result.output.endswith(": not shown: model groq/gpt-oss-120b does not take images")


def test_read_of_a_broken_image_is_one_line(ctx, tmp_path):
    (tmp_path / "cut.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    result = ReadTool().run({"path": "cut.png"}, ctx)
    assert not result.ok and result.images == []
    assert result.output == "cut.png: not a PNG, JPEG, GIF or WebP image (or its header is broken)"
