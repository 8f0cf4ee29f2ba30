"""A `/mcp__server__prompt` command's words as the prompt's arguments, in the order the
prompt declares them, as Claude Code gives them."""

from __future__ import annotations

import pytest

from caretz.app.mcp_mentions import prompt_arguments, usage
from caretz.mcp_client.model import PromptArgument, RemotePrompt
from caretz.mcp_client.resources import ResourceProblem

REVIEW = RemotePrompt(
    "review",
    "Review a pull request.",
    (PromptArgument("pr", required=True), PromptArgument("focus"), PromptArgument("note")),
)


def test_words_fill_the_arguments_in_declared_order_and_the_last_takes_the_rest():
    assert prompt_arguments(REVIEW, "42", "mcp__gh__review") == {"pr": "42"}
    assert prompt_arguments(REVIEW, '42 "error handling" be kind please', "c") == {
        "pr": "42",
        "focus": "error handling",
        "note": "be kind please",
    }
    assert prompt_arguments(REVIEW, "42 'unclosed quote", "c") == {
        "pr": "42",
        "focus": "'unclosed",
        "note": "quote",
    }


def test_a_missing_required_argument_is_one_line_naming_it_and_the_usage():
    with pytest.raises(ResourceProblem) as raised:
        prompt_arguments(REVIEW, "   ", "mcp__gh__review")

    said = str(raised.value)
    assert said == ("missing its required argument 'pr' (/mcp__gh__review <pr> [focus] [note])")
    assert usage("mcp__gh__review", RemotePrompt("bare")) == "/mcp__gh__review"


def test_a_prompt_without_arguments_takes_none():
    assert prompt_arguments(RemotePrompt("standup"), "anything at all", "c") == {}
