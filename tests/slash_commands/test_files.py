"""Custom command files: where they are found, their names, front matter, arguments."""

from __future__ import annotations

from pathlib import Path

from caretz.sandbox.door import ProjectDoor
from caretz.slash_commands.expand import expand
from caretz.slash_commands.files import command_folders, load_catalog
from caretz.slash_commands.markdown import split_front_matter, split_list


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_names_come_from_paths_and_the_first_folder_wins(tmp_path: Path):
    project, config = tmp_path / "project", tmp_path / "config"
    write(project / ".caretz/commands/review.md", "project review")
    write(project / ".caretz/commands/frontend/Test.md", "frontend test")
    write(config / "commands/review.md", "user review")
    write(config / "commands/mine.md", "user mine")
    write(project / ".claude/commands/legacy.md", "from claude")
    write(project / ".claude/commands/.hidden/x.md", "skipped")
    write(project / ".claude/commands/notes.txt", "not markdown")

    catalog = load_catalog(command_folders(project, config, ProjectDoor((project,))))

    assert sorted(catalog.commands) == ["frontend:test", "legacy", "mine", "review"]
    assert catalog.get("review").prompt == "project review"
    assert catalog.get("Frontend:Test").label == "project"
    assert catalog.get("legacy").label == "claude" and catalog.get("mine").label == "user"


def test_a_command_that_shadows_a_built_in_is_refused_with_a_warning(tmp_path: Path):
    path = write(tmp_path / ".caretz/commands/model.md", "shadow")

    catalog = load_catalog(
        command_folders(tmp_path, tmp_path / "cfg", ProjectDoor((tmp_path,))),
        reserved=["model", "q"],
    )

    assert catalog.commands == {}
    assert catalog.warnings == [
        f"{path}: /model is a built-in command; the file is not used (rename it)"
    ]


def test_front_matter_fields(tmp_path: Path):
    write(
        tmp_path / ".caretz/commands/commit.md",
        "---\n"
        "description: Make a commit\n"
        "argument-hint: [message]\n"
        'model: "anthropic/small"\n'
        "allowed-tools: Bash(git add:*), Bash(git commit:*)\n"
        "disable-model-invocation: true\n"
        "---\n\n"
        "Commit with message $ARGUMENTS\n",
    )
    write(tmp_path / ".caretz/commands/plain.md", "# Plain heading\nDo the thing.\n")
    write(
        tmp_path / ".caretz/commands/listed.md",
        "---\nallowed-tools:\n  - Read\n  - Bash(echo a, b)\n---\nx",
    )

    catalog = load_catalog(command_folders(tmp_path, tmp_path / "cfg", ProjectDoor((tmp_path,))))
    commit = catalog.get("commit")

    assert commit.description == "Make a commit" and commit.argument_hint == "[message]"
    assert commit.model == "anthropic/small"
    assert commit.allowed_tools == ("Bash(git add:*)", "Bash(git commit:*)")
    assert commit.prompt == "Commit with message $ARGUMENTS"
    plain = catalog.get("plain")
    assert plain.description == "Plain heading" and plain.model is None
    assert catalog.get("listed").allowed_tools == ("Read", "Bash(echo a, b)")


def test_a_file_without_a_closing_line_is_all_prompt():
    assert split_front_matter("---\nnot closed\n") == ({}, "---\nnot closed\n")
    assert split_list('[Read, "Bash(x, y)"]') == ["Read", "Bash(x, y)"]


def test_arguments_fill_the_placeholders():
    assert expand("Fix issue $1 in $2 ($ARGUMENTS)", '12 "the parser"') == (
        'Fix issue 12 in the parser (12 "the parser")'
    )
    assert expand("Only $3 here", "a b") == "Only  here"
    assert expand("$ARGUMENTS", "$1 is not filled twice") == "$1 is not filled twice"
    assert expand("No placeholders.", "some words") == "No placeholders.\n\nARGUMENTS: some words"
    assert expand("No placeholders.", "") == "No placeholders."
    assert expand("Say $1", "'unclosed quote") == "Say 'unclosed"
