"""edit's matching: exact, then with quotes and trailing whitespace normalised, then the
closest region and what differs."""

from __future__ import annotations

import pytest

from caretz.tools.edit_match import EditMiss, apply_edit


def test_an_exact_single_match_is_replaced_with_no_note():
    applied = apply_edit("a = 1\nb = 2\n", "b = 2", "b = 3", False, "f.py")
    assert (applied.text, applied.count, applied.note) == ("a = 1\nb = 3\n", 1, "")


def test_trailing_whitespace_in_old_string_is_ignored_when_that_makes_one_match():
    applied = apply_edit(
        "def f():\n    return 1\n", "def f():   \n    return 1", "x", False, "f.py"
    )
    assert applied.text == "x\n"
    assert (
        applied.note
        == "old_string matched only with trailing whitespace ignored (on line 1); check the result"
    )


def test_the_files_straight_quotes_win_over_a_models_curly_ones():
    applied = apply_edit("say('hi')\n", "say(‘hi’)", "say(‘hello’)", False, "f.py")
    assert applied.text == "say('hello')\n"
    assert "curly quotes read as straight ones" in applied.note


def test_curly_quotes_in_the_file_are_kept_when_the_model_wrote_straight_ones():
    applied = apply_edit("He said “go”.\n", 'He said "go".', "He said “stop”.", False, "a.md")
    assert applied.text == "He said “stop”.\n"


def test_a_normalised_match_in_several_places_names_them():
    with pytest.raises(EditMiss) as miss:
        apply_edit("x = 'a'\ny\nx = 'a'\n", "x = ‘a’", "z", False, "f.py")
    assert "it matches 2 places" in str(miss.value) and "lines 1, 3" in str(miss.value)


def test_replace_all_applies_to_normalised_matches_too():
    applied = apply_edit("x = 'a'  \nx = 'a'\n", "x = ‘a’", "z", True, "f.py")
    assert (applied.text, applied.count) == ("z\nz\n", 2)


def test_nothing_close_says_so():
    with pytest.raises(EditMiss) as miss:
        apply_edit("alpha\nbeta\n", "completely different text here", "z", False, "f.py")
    assert str(miss.value) == (
        "old_string not found in f.py; nothing in it comes close. Read the file again and "
        "copy the text exactly"
    )


def test_whitespace_and_quotes_together_are_named():
    with pytest.raises(EditMiss) as miss:
        apply_edit("a = 'x'\nb = 'y'\n", "a  =  ‘x’\nb = 'y'", "z", False, "f.py")
    assert "What differs: whitespace and quotes" in str(miss.value)
    assert "     1\ta = 'x'" in str(miss.value)
