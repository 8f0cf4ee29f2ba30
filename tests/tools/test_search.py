from __future__ import annotations

import os
from pathlib import Path

import pytest

from caretz.tools.base import ToolContext
from caretz.tools.search import GlobTool, GrepTool, glob_to_regex


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


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**/*.py", "a.py", True),
        ("**/*.py", "x/y/a.py", True),
        ("**/*.py", "a.pyc", False),
        ("*.py", "x/a.py", False),
        ("src/*.py", "src/x/a.py", False),
        ("src/**", "src/x/a.py", True),
        ("**/*.{ts,tsx}", "web/app.tsx", True),
        ("test_?.py", "test_1.py", True),
        ("[ab].txt", "c.txt", False),
    ],
)
def test_glob_to_regex(pattern, path, matches):
    assert bool(glob_to_regex(pattern).match(path)) is matches


def test_glob_lists_newest_first(ctx, tmp_path):
    make(tmp_path, "old.py", mtime=1_000_000)
    make(tmp_path, "pkg/new.py", mtime=3_000_000)
    make(tmp_path, "mid.py", mtime=2_000_000)
    make(tmp_path, "notes.txt", mtime=4_000_000)
    result = GlobTool().run({"pattern": "**/*.py"}, ctx)
    assert result.ok
    assert result.output.splitlines() == ["pkg/new.py", "mid.py", "old.py"]


def test_glob_skips_tool_and_vendor_dirs(ctx, tmp_path):
    for skipped in [".git/x.py", ".venv/lib/x.py", "node_modules/m/x.py", "pkg/__pycache__/x.py"]:
        make(tmp_path, skipped)
    make(tmp_path, ".github/ci.py")
    make(tmp_path, "pkg/kept.py")
    result = GlobTool().run({"pattern": "**/*.py"}, ctx)
    assert sorted(result.output.splitlines()) == [".github/ci.py", "pkg/kept.py"]


def test_glob_in_a_subdirectory(ctx, tmp_path):
    make(tmp_path, "src/a.py")
    make(tmp_path, "other/b.py")
    result = GlobTool().run({"pattern": "*.py", "path": "src"}, ctx)
    assert result.output == "src/a.py"


def test_glob_caps_at_200_and_says_how_many_more(ctx, tmp_path):
    for i in range(205):
        make(tmp_path, f"f{i:03}.txt")
    lines = GlobTool().run({"pattern": "*.txt"}, ctx).output.splitlines()
    assert len(lines) == 201
    assert lines[-1].startswith("[5 more files not shown")


def test_glob_without_matches_is_ok_and_says_so(ctx):
    result = GlobTool().run({"pattern": "**/*.rs"}, ctx)
    assert result.ok
    assert "No files match **/*.rs" in result.output


def test_glob_missing_dir_fails(ctx):
    result = GlobTool().run({"pattern": "*", "path": "nope"}, ctx)
    assert not result.ok
    assert "Not a directory: nope" in result.output


def test_grep_reports_path_line_and_text(ctx, tmp_path):
    make(tmp_path, "a.py", "import os\ndef main():\n    pass\n")
    make(tmp_path, "b/c.py", "x = 1\ndef helper():\n")
    result = GrepTool().run({"pattern": r"^def \w+"}, ctx)
    assert result.ok
    assert result.output.splitlines() == ["a.py:2: def main():", "b/c.py:2: def helper():"]


def test_grep_glob_filter_by_name_and_by_path(ctx, tmp_path):
    make(tmp_path, "a.py", "needle\n")
    make(tmp_path, "a.txt", "needle\n")
    make(tmp_path, "src/b.py", "needle\n")
    by_name = GrepTool().run({"pattern": "needle", "glob": "*.py"}, ctx)
    assert by_name.output.splitlines() == ["a.py:1: needle", "src/b.py:1: needle"]
    by_path = GrepTool().run({"pattern": "needle", "glob": "src/**/*.py"}, ctx)
    assert by_path.output.splitlines() == ["src/b.py:1: needle"]


def test_grep_single_file_and_case_insensitive(ctx, tmp_path):
    make(tmp_path, "a.txt", "Alpha\nalpha\nbeta\n")
    make(tmp_path, "b.txt", "alpha\n")
    sensitive = GrepTool().run({"pattern": "alpha", "path": "a.txt"}, ctx)
    assert sensitive.output == "a.txt:2: alpha"
    insensitive = GrepTool().run(
        {"pattern": "ALPHA", "path": "a.txt", "case_insensitive": True}, ctx
    )
    assert insensitive.output.splitlines() == ["a.txt:1: Alpha", "a.txt:2: alpha"]


def test_grep_skips_binary_files_and_skipped_dirs(ctx, tmp_path):
    (tmp_path / "blob.bin").write_bytes(b"needle\x00\x01")
    make(tmp_path, "node_modules/m.js", "needle\n")
    make(tmp_path, ".git/config", "needle\n")
    make(tmp_path, "ok.txt", "needle\n")
    assert GrepTool().run({"pattern": "needle"}, ctx).output == "ok.txt:1: needle"


def test_grep_bad_regex_fails_naming_the_error(ctx):
    result = GrepTool().run({"pattern": "foo(bar"}, ctx)
    assert not result.ok
    assert "Invalid regex 'foo(bar'" in result.output
    assert "missing )" in result.output


def test_grep_stops_at_max_results(ctx, tmp_path):
    make(tmp_path, "a.txt", "hit\n" * 10)
    lines = GrepTool().run({"pattern": "hit", "max_results": 3}, ctx).output.splitlines()
    assert lines[:3] == ["a.txt:1: hit", "a.txt:2: hit", "a.txt:3: hit"]
    assert lines[3].startswith("[stopped after 3 matches")
    assert len(lines) == 4


def test_grep_no_match_is_ok(ctx, tmp_path):
    make(tmp_path, "a.txt", "x\n")
    result = GrepTool().run({"pattern": "zzz"}, ctx)
    assert result.ok
    assert "No matches" in result.output


def test_grep_missing_path_fails(ctx):
    result = GrepTool().run({"pattern": "x", "path": "nope"}, ctx)
    assert not result.ok
    assert "Path not found: nope" in result.output


def test_glob_and_grep_skip_files_a_read_deny_or_ask_rule_covers(tmp_path: Path):
    from caretz.permissions.policy import RuleSet
    from caretz.permissions.settings import rules_from_permissions

    make(tmp_path, ".env", "TOKEN=hush\n")
    make(tmp_path, "keys/deploy.pem", "TOKEN=pem\n")
    make(tmp_path, "notes/private.md", "TOKEN=ask\n")
    make(tmp_path, "src/app.py", "TOKEN = read_env()\n")
    rules = rules_from_permissions(
        {"deny": ["Read(./.env*)", "Read(*.pem)"], "ask": ["Read(./notes/**)"]}, "test"
    )
    ctx = ToolContext(workspace=tmp_path, rules=RuleSet(rules, tmp_path))

    found = GrepTool().run({"pattern": "TOKEN"}, ctx).output
    listed = GlobTool().run({"pattern": "**/*"}, ctx).output

    assert found.splitlines() == [
        "src/app.py:1: TOKEN = read_env()",
        "[3 files skipped: the user's Read rules cover them]",
    ]
    assert listed.splitlines()[:-1] == ["src/app.py"]
    assert "hush" not in found and ".env" not in listed and "deploy.pem" not in listed
