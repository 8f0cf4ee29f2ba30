"""grep and glob on the rg that ships with caretz: what they skip, their modes, paging,
the order of their results, the timeout."""

from __future__ import annotations

import os
import re
import subprocess
import threading
from pathlib import Path

import pytest

from caretz.permissions.paths import glob_to_regex
from caretz.tools.base import ToolContext
from caretz.tools.ripgrep import RipgrepMissing, rg_path
from caretz.tools.search import GlobTool, GrepTool


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path)


def make(root: Path, relative: str, content: str = "", mtime: float | None = None) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def git_repo(root: Path, ignore: str) -> None:
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / ".gitignore").write_text(ignore)


def grep(ctx: ToolContext, **args: object) -> list[str]:
    result = GrepTool().run(dict(args), ctx)
    assert result.ok, result.output
    return result.output.splitlines()


def glob(ctx: ToolContext, **args: object) -> list[str]:
    result = GlobTool().run(dict(args), ctx)
    assert result.ok, result.output
    return result.output.splitlines()


def test_rg_comes_from_the_installed_package_not_from_path():
    found = rg_path()
    assert "site-packages" in str(found) or found.parent.name in ("bin", "Scripts")
    version = subprocess.run([found, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.startswith("ripgrep 15.")


def test_without_the_package_a_search_fails_with_one_line():
    with pytest.raises(RipgrepMissing) as missing:
        rg_path("caretz-no-such-ripgrep")
    assert str(missing.value) == (
        "search needs ripgrep from the caretz-no-such-ripgrep package, which is not installed "
        "with caretz here: reinstall caretz (or pip install caretz-no-such-ripgrep)"
    )


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**/*.py", "a.py", True),
        ("**/*.py", "x/y/a.py", True),
        ("*.py", "x/a.py", False),
        ("src/**", "src/x/a.py", True),
        ("**/*.{ts,tsx}", "web/app.tsx", True),
        ("[ab].txt", "c.txt", False),
    ],
)
def test_glob_matches_like_the_permission_globs(ctx, tmp_path, pattern, path, matches):
    make(tmp_path, path)
    assert (glob_to_regex(pattern).match(path) is not None) is matches
    assert (glob(ctx, pattern=pattern) == [path]) is matches


def test_glob_lists_newest_first(ctx, tmp_path):
    make(tmp_path, "old.py", mtime=1_000_000)
    make(tmp_path, "pkg/new.py", mtime=3_000_000)
    make(tmp_path, "mid.py", mtime=2_000_000)
    make(tmp_path, "notes.txt", mtime=4_000_000)
    assert glob(ctx, pattern="**/*.py") == ["pkg/new.py", "mid.py", "old.py"]


def test_gitignored_and_hidden_files_are_skipped_unless_asked_for(ctx, tmp_path):
    git_repo(tmp_path, "venv/\nbuild.log\n")
    make(tmp_path, "venv/lib/site.py", "import json\n")
    make(tmp_path, "build.log", "import json\n")
    make(tmp_path, ".github/ci.py", "import json\n")
    make(tmp_path, ".hidden.py", "import json\n")
    make(tmp_path, "src/app.py", "import json\n")

    assert glob(ctx, pattern="**/*.py") == ["src/app.py"]
    assert glob(ctx, pattern="**/*") == ["src/app.py"]
    assert grep(ctx, pattern="import json") == ["src/app.py:1:import json"]
    assert grep(ctx, pattern="import json", glob="*.py") == ["src/app.py:1:import json"]
    assert grep(ctx, pattern="import json", type="py") == ["src/app.py:1:import json"]
    everything = sorted(glob(ctx, pattern="**/*.py", include_ignored=True))
    assert everything == [".github/ci.py", ".hidden.py", "src/app.py", "venv/lib/site.py"]
    assert "build.log:1:import json" in grep(ctx, pattern="import json", include_ignored=True)
    assert not any(".git/" in line for line in glob(ctx, pattern="**", include_ignored=True))


def test_no_match_says_what_was_not_searched(ctx, tmp_path):
    make(tmp_path, "a.txt", "x\n")
    assert grep(ctx, pattern="zzz") == [
        "No matches for 'zzz' (files .gitignore/.ignore leave out and hidden files were not "
        "searched)"
    ]
    assert glob(ctx, pattern="**/*.rs")[0].startswith("No files match **/*.rs in the workspace")


def test_grep_content_is_path_line_text_sorted_by_path(ctx, tmp_path):
    make(tmp_path, "b/c.py", "x = 1\ndef helper():\n")
    make(tmp_path, "a.py", "import os\ndef main():\n    pass\n")
    assert grep(ctx, pattern=r"^def \w+") == ["a.py:2:def main():", "b/c.py:2:def helper():"]
    assert grep(ctx, pattern=r"^def \w+", **{"-n": False}) == [
        "a.py:def main():",
        "b/c.py:def helper():",
    ]


def test_grep_context_lines_and_their_total(ctx, tmp_path):
    make(tmp_path, "a.txt", "one\ntwo\nhit\nfour\nfive\n")
    assert grep(ctx, pattern="hit", **{"-C": 1}) == [
        "a.txt-2-two",
        "a.txt:3:hit",
        "a.txt-4-four",
        "[3 lines, 1 matching]",
    ]
    assert grep(ctx, pattern="hit", **{"-B": 2}) == [
        "a.txt-1-one",
        "a.txt-2-two",
        "a.txt:3:hit",
        "[3 lines, 1 matching]",
    ]


def test_grep_files_with_matches_newest_first_and_count(ctx, tmp_path):
    make(tmp_path, "old.txt", "hit\nhit\n", mtime=1_000_000)
    make(tmp_path, "new.txt", "hit\n", mtime=2_000_000)
    make(tmp_path, "none.txt", "miss\n")
    assert grep(ctx, pattern="hit", output_mode="files_with_matches") == ["new.txt", "old.txt"]
    assert grep(ctx, pattern="hit", output_mode="count") == [
        "new.txt:1",
        "old.txt:2",
        "[2 files, 3 matching lines]",
    ]


def test_grep_pages_with_the_total_and_the_next_offset(ctx, tmp_path):
    make(tmp_path, "a.txt", "hit\n" * 3013)
    first = grep(ctx, pattern="hit", head_limit=40)
    assert first[:2] == ["a.txt:1:hit", "a.txt:2:hit"] and len(first) == 41
    assert first[-1] == "[40 of 3,013 matching lines; offset=40 for more]"
    second = grep(ctx, pattern="hit", head_limit=40, offset=40)
    assert second[0] == "a.txt:41:hit"
    assert second[-1] == "[41-80 of 3,013 matching lines; offset=80 for more]"
    last = grep(ctx, pattern="hit", head_limit=40, offset=3000)
    assert last[-2:] == ["a.txt:3013:hit", "[3,001-3,013 of 3,013 matching lines]"]
    assert grep(ctx, pattern="hit", offset=5000) == [
        "[offset 5000 is past the end: 3,013 matching lines]"
    ]


def test_glob_pages_newest_first(ctx, tmp_path):
    for i in range(150):
        make(tmp_path, f"f{i:03}.txt", mtime=1_000_000 + i)
    first = glob(ctx, pattern="*.txt")
    assert first[0] == "f149.txt" and len(first) == 101
    assert first[-1] == "[100 of 150 files; offset=100 for more]"
    rest = glob(ctx, pattern="*.txt", offset=100)
    assert rest[0] == "f049.txt" and rest[-2] == "f000.txt"


def test_output_stays_within_the_character_budget(tmp_path):
    make(tmp_path, "a.txt", ("x" * 90 + "\n") * 50)
    ctx = ToolContext(workspace=tmp_path, output_limit_chars=1000)
    lines = grep(ctx, pattern="x")
    assert len("\n".join(lines[:-1])) <= 1000
    assert lines[-1] == f"[{len(lines) - 1} of 50 matching lines; offset={len(lines) - 1} for more]"


def test_a_long_line_is_shown_around_its_match(ctx, tmp_path):
    """A minified file's match a megabyte into its line: the row shows the match with what
    surrounds it (é before it, so the cut lands inside a character), not the line's start."""
    line = "é" * 300_000 + "var a=1;" * 100_000 + "findMe(42)" + "b=2;" * 200_000
    make(tmp_path, "min.js", line + "\nshort findMe line\n")
    long, short = grep(ctx, pattern="findMe")
    assert long.startswith("min.js:1:[…] ") and long.endswith(" […]")
    assert "var a=1;findMe(42)b=2;" in long and len(long) < 700
    assert short == "min.js:2:short findMe line"
    whole = grep(ctx, pattern="findMe", path="min.js", **{"-n": False}, head_limit=1)[0]
    assert whole.startswith("min.js:[…] ") and "findMe(42)" in whole


def test_case_insensitive_multiline_and_lookaround(ctx, tmp_path):
    make(tmp_path, "a.txt", "Alpha\nalpha\nbeta\n")
    assert grep(ctx, pattern="ALPHA", path="a.txt", **{"-i": True}) == [
        "a.txt:1:Alpha",
        "a.txt:2:alpha",
    ]
    assert grep(ctx, pattern=r"alpha\nbeta", multiline=True) == ["a.txt:2:alpha", "a.txt:3:beta"]
    assert grep(ctx, pattern=r"(?<=al)pha") == ["a.txt:2:alpha"]


def test_binary_files_are_skipped(ctx, tmp_path):
    (tmp_path / "blob.bin").write_bytes(b"needle\x00\x01" * 100)
    make(tmp_path, "ok.txt", "needle\n")
    assert grep(ctx, pattern="needle") == ["ok.txt:1:needle"]


def test_bad_input_gets_one_clear_message(ctx, tmp_path):
    bad_regex = GrepTool().run({"pattern": "foo(bar"}, ctx)
    assert not bad_regex.ok and "regex parse error" in bad_regex.output
    bad_type = GrepTool().run({"pattern": "x", "type": "nope"}, ctx)
    assert bad_type.output == "grep failed: unrecognized file type: nope"
    missing = GrepTool().run({"pattern": "x", "path": "nope"}, ctx)
    assert not missing.ok and missing.output == "Path not found: nope"
    assert GlobTool().run({"pattern": "*", "path": "nope"}, ctx).output == "Path not found: nope"


def test_a_fifo_in_the_tree_does_not_hang_the_search(ctx, tmp_path):
    os.mkfifo(tmp_path / "pipe")
    make(tmp_path, "a.txt", "needle\n")
    assert grep(ctx, pattern="needle") == ["a.txt:1:needle"]
    assert glob(ctx, pattern="*") == ["a.txt"]
    named = GrepTool().run({"pattern": "needle", "path": "pipe"}, ctx)
    assert not named.ok and named.output == "Not a regular file or directory: pipe"


def test_symlinks_out_of_the_root_are_not_followed(tmp_path):
    outside = tmp_path / "outside"
    make(outside, "secret.txt", "needle\n")
    work = tmp_path / "work"
    make(work, "a.txt", "needle\n")
    (work / "link.txt").symlink_to(outside / "secret.txt")
    (work / "linkdir").symlink_to(outside)
    ctx = ToolContext(workspace=work)
    assert grep(ctx, pattern="needle") == ["a.txt:1:needle"]
    assert glob(ctx, pattern="**/*") == ["a.txt"]


def test_a_search_that_runs_too_long_is_ended_with_a_clear_message(ctx, tmp_path):
    """A stand-in rg that never finishes: it waits on a FIFO nobody writes."""
    fifo = tmp_path / "never"
    os.mkfifo(fifo)
    stand_in = tmp_path / "rg"
    stand_in.write_text(f"#!/bin/sh\nprintf './a.txt\\0001:partial\\n'\nexec cat {fifo}\n")
    stand_in.chmod(0o755)
    result = GrepTool(timeout_s=0.5, rg=stand_in).run({"pattern": "x"}, ctx)
    assert result.ok
    assert result.output.splitlines() == [
        "a.txt:1:partial",
        "[search timed out after 0.5 s: the results are incomplete; narrow path, glob or pattern]",
    ]


def test_a_cancel_ends_the_search(ctx, tmp_path):
    fifo = tmp_path / "never"
    os.mkfifo(fifo)
    stand_in = tmp_path / "rg"
    stand_in.write_text(f"#!/bin/sh\nexec cat {fifo}\n")
    stand_in.chmod(0o755)
    ctx.cancel = threading.Event()
    ctx.cancel.set()
    result = GlobTool(rg=stand_in).run({"pattern": "*"}, ctx)
    assert "[search cancelled: the results are incomplete]" in result.output


def test_glob_and_grep_skip_files_a_read_deny_or_ask_rule_covers(tmp_path: Path):
    from caretz.permissions.policy import RuleSet
    from caretz.permissions.settings import rules_from_permissions

    make(tmp_path, "env.txt", "TOKEN=hush\n")
    make(tmp_path, "keys/deploy.pem", "TOKEN=pem\n")
    make(tmp_path, "notes/private.md", "TOKEN=ask\n")
    make(tmp_path, "src/app.py", "TOKEN = read_env()\n")
    rules = rules_from_permissions(
        {"deny": ["Read(./env.txt)", "Read(*.pem)"], "ask": ["Read(./notes/**)"]}, "test"
    )
    ctx = ToolContext(workspace=tmp_path, rules=RuleSet(rules, tmp_path))

    found = grep(ctx, pattern="TOKEN")
    listed = glob(ctx, pattern="**/*")

    assert found == [
        "src/app.py:1:TOKEN = read_env()",
        "[3 files skipped: the user's Read rules cover them]",
    ]
    assert listed[:-1] == ["src/app.py"]


def a_kernel_like_tree(root: Path) -> None:
    """Drivers in many folders, a generated (gitignored) one inside the globbed folder."""
    git_repo(root, "drivers/net/generated/\n*.o\n")
    for n in range(600):
        area = ("net", "gpu", "scsi", "usb", "tty")[n % 5]
        make(root, f"drivers/{area}/d{n % 30}/drv{n}.c", f"static int probe_{n}(void);\n")
        make(root, f"drivers/{area}/d{n % 30}/drv{n}.o", "probe_ binary-ish\n")
    make(root, "drivers/net/generated/tables.c", "static int probe_generated(void);\n")
    make(root, "drivers/net/README", "probe_ in a text file\n")


def recording_rg(root: Path) -> tuple[Path, Path]:
    """A stand-in rg that writes down the folder it runs in, then runs the real one."""
    log = root / "rg.log"
    stand_in = root / "rg"
    stand_in.write_text(f'#!/bin/sh\npwd -P >> {log}\nexec {rg_path()} "$@"\n')
    stand_in.chmod(0o755)
    return stand_in, log


@pytest.mark.parametrize("tool", ["grep", "glob"])
def test_a_glob_with_folders_walks_only_those_folders_and_keeps_the_ignore_rules(tmp_path, tool):
    tree = tmp_path / "linux"
    tree.mkdir()
    a_kernel_like_tree(tree)
    stand_in, log = recording_rg(tmp_path)
    ctx = ToolContext(workspace=tree)
    if tool == "grep":
        args = {"pattern": "probe_", "glob": "drivers/net/**/*.c", "output_mode": "count"}
        result = GrepTool(rg=stand_in).run({**args, "head_limit": 1000}, ctx)
        paths = [line.rpartition(":")[0] for line in result.output.splitlines()[:-1]]
    else:
        result = GlobTool(rg=stand_in).run(
            {"pattern": "drivers/net/**/*.c", "head_limit": 1000}, ctx
        )
        paths = result.output.splitlines()
    assert result.ok, result.output
    assert len(paths) == 120 and all(re.fullmatch(r"drivers/net/d\d+/drv\d+\.c", p) for p in paths)
    assert log.read_text().splitlines() == [str((tree / "drivers" / "net").resolve())]
    # A folder that is not there is said so; a glob without folders still walks the root.
    missing = GrepTool(rg=stand_in).run({"pattern": "x", "glob": "drivers/nett/*.c"}, ctx)
    assert not missing.ok and "drivers/nett" in missing.output
    assert glob(ctx, pattern="**/tables.c")[0].startswith("No files match")  # still ignored


def test_grep_of_a_binary_file_by_name_says_so_in_one_row(ctx, tmp_path):
    make(tmp_path, "assets/blob.bin", "")
    (tmp_path / "assets" / "blob.bin").write_bytes(b"head\0\x01\x02 needle here\n")
    (line,) = grep(ctx, pattern="needle", path="assets/blob.bin")
    assert line.startswith("assets/blob.bin: binary file matches (found ")
    assert line.endswith("; its lines are not shown") and "/proc/self/fd" not in line
    counted = GrepTool().run({"pattern": "needle", "path": "assets"}, ctx)
    assert "blob.bin" not in counted.output  # a walk skips binary files, as rg does


def test_a_line_of_a_latin1_file_is_shown_in_its_own_encoding(ctx, tmp_path):
    """rg prints a Latin-1 file's bytes as they are: the row is read as the file reads."""
    text = "".join(
        f"compose '{c}' to '{c.upper()}'  # café, Grüße {n}\n" for n, c in enumerate("éàüç")
    )
    (tmp_path / "keymap.map").write_bytes(text.encode("latin-1") * 20)
    (tmp_path / "notes.txt").write_text("compose in UTF-8: déjà vu\n")
    rows = grep(ctx, pattern="compose '", head_limit=2) + grep(ctx, pattern="déjà")
    assert rows[:2] == [
        "keymap.map:1:compose 'é' to 'É'  # café, Grüße 0",
        "keymap.map:2:compose 'à' to 'À'  # café, Grüße 1",
    ]
    assert rows[-1] == "notes.txt:1:compose in UTF-8: déjà vu"
