"""The one line for a `/name` that names no command."""

from __future__ import annotations

from caretz.slash_commands.names import similar_names, unknown_command

BUILT_IN = ["help", "model", "profile", "clear", "cost", "compact", "rewind", "resume"]


def test_close_names_are_those_begun_then_those_resembled():
    assert similar_names("modle", BUILT_IN) == ["/model"]
    assert similar_names("c", BUILT_IN) == ["/clear", "/cost", "/compact"]  # three at most
    assert similar_names("re", BUILT_IN) == ["/rewind", "/resume"]
    assert similar_names("frobnicate", BUILT_IN) == []


def test_the_line_names_the_close_commands_else_where_to_look():
    assert unknown_command("modle", BUILT_IN, "/help lists the commands") == (
        "unknown command /modle: did you mean /model? (nothing was sent)"
    )
    assert unknown_command("re", BUILT_IN, "") == (
        "unknown command /re: did you mean /rewind or /resume? (nothing was sent)"
    )
    assert unknown_command("c", BUILT_IN, "") == (
        "unknown command /c: did you mean /clear, /cost or /compact? (nothing was sent)"
    )
    assert unknown_command("frobnicate", BUILT_IN, "/help lists the commands") == (
        "unknown command /frobnicate: /help lists the commands (nothing was sent)"
    )
