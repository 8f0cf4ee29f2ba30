"""Reading Claude Code's inline forms out of a command's prompt: `!`command`` spans and
`@path` mentions, and putting outputs and files back in."""

from __future__ import annotations

from caretz.slash_commands.inline import (
    ResourceMention,
    file_mentions,
    replace_spans,
    resource_mentions,
    shell_spans,
    with_files,
)


def test_only_a_bang_right_before_a_backtick_span_is_a_command():
    text = "Status: !`git status`\nPlain `git log`, wow! and ! `spaced` and !`  ` and !`diff`"

    assert [span.command for span in shell_spans(text)] == ["git status", "diff"]


def test_spans_are_replaced_by_their_outputs_in_order():
    text = "a !`one` b !`two` c"
    spans = shell_spans(text)

    assert replace_spans(text, spans, ["1", "[exit code 2]"]) == "a 1 b [exit code 2] c"


def test_a_command_may_hold_quotes_and_pipes_but_not_a_backtick():
    spans = shell_spans("!`git diff HEAD | grep -c '^+'` then !`echo $(date)`")

    assert [span.command for span in spans] == ["git diff HEAD | grep -c '^+'", "echo $(date)"]


def test_mentions_are_words_that_start_with_at_outside_command_spans():
    text = "See @notes.txt, me@example.com, (x@y) @src/app.py) and !`git log @{u}` @notes.txt,"

    mentions = file_mentions(text)

    assert [m.token for m in mentions] == ["notes.txt,", "src/app.py)"]
    assert mentions[0].candidates == ("notes.txt,", "notes.txt")
    assert file_mentions("@pytest.fixture")[0].candidates == ("pytest.fixture",)


def test_files_follow_the_prompt_in_blocks_naming_them():
    assert with_files("Look.\n", [("a.txt", "     1\tA")]) == (
        'Look.\n\n<file path="a.txt">\n     1\tA\n</file>'
    )
    assert with_files("Nothing to add.", []) == "Nothing to add."


def test_only_mentions_of_existing_files_are_read(tmp_path):
    from caretz.app.command_expansion import existing_files

    (tmp_path / "notes.txt").write_text("n")
    (tmp_path / "src").mkdir()
    text = f"@notes.txt. @src @missing.txt @pytest.fixture @notes.txt @{'x' * 5000}"

    assert existing_files(file_mentions(text), tmp_path) == ["notes.txt"]


def test_a_resource_mention_is_a_server_then_a_uri_with_a_scheme():
    text = (
        "Compare @postgres:schema://users with @docs:file://api/auth.md, then "
        "@git-hub.v2:issue://123). Again @postgres:schema://users."
    )

    assert resource_mentions(text) == [
        ResourceMention("postgres", "schema://users"),
        ResourceMention("docs", "file://api/auth.md"),
        ResourceMention("git-hub.v2", "issue://123"),
    ]
    assert file_mentions(text) == []  # a resource mention is never a file


def test_addresses_files_and_half_forms_are_no_resource_mentions():
    text = (
        "mail ada@example.com or me@db:schema://x; read @src/main.py:12 and @C:/tmp/x, "
        "@notes:todo, @db:schema:// (no path), @:file://x, @db:1x://y, "
        "!`echo @db:schema://inside` and @http://example.com"
    )

    assert resource_mentions(text) == []
    named = [mention.token for mention in file_mentions(text)]
    assert "src/main.py:12" in named and "notes:todo," in named
