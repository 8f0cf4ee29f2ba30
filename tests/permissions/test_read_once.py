"""A command written more than once in a line is read once, and only when it reads alike.

(Kept out of the files tests/permissions/corpus.py gathers its lines from: the recorded
corpus stays as it was recorded.)"""

from __future__ import annotations

import tempfile

from caretz.permissions.command import Runs, walk_all
from caretz.permissions.policy import RuleSet
from caretz.permissions.rules import parse_rule
from caretz.permissions.shell import forget_read, parse_command_line


def test_a_command_written_again_is_read_once():
    forget_read()
    first, _, again = parse_command_line("git status; ls; git status")
    assert again is first


def test_the_same_text_read_another_way_is_read_again():
    # At the start of a line tree-sitter-bash reads a`echo b` as two words, after `;` as
    # one: the second command must not be taken for the first.
    forget_read()
    first, _, again, _ = parse_command_line("echo a`echo b`; echo a`echo b`")
    assert [word.text for word in first.words] == ["echo", "a", "`echo b`"]
    assert [word.text for word in again.words] == ["echo", "a`echo b`"]


def test_a_command_written_again_with_a_heredoc_reads_the_heredoc():
    forget_read()
    first, again = parse_command_line("bash; bash <<'EOF'\nrm -rf y\nEOF")
    assert first.hidden == "bash reads the commands it runs from standard input"
    assert again.hidden is None and again.runs is Runs.INSTEAD
    assert [c.program for c in walk_all((again,))] == ["bash", "rm"]


def test_each_command_written_again_is_still_decided():
    root = tempfile.mkdtemp()
    rules = RuleSet(
        [parse_rule("Bash(ls:*)", "allow", "test"), parse_rule("Bash(rm -rf:*)", "deny", "test")],
        root,
    )
    forget_read()
    denied = rules.check("bash", {"command": "ls; ls; rm -rf v; ls; rm -rf v"}, root)
    assert denied.outcome == "deny" and denied.part == "rm -rf v"
    allowed = rules.check("bash", {"command": "ls; ls -l; ls; ls -l"}, root)
    assert allowed.outcome == "allow"
    unallowed = rules.check("bash", {"command": "ls; ls; cat x; ls"}, root)
    assert unallowed.outcome == "no-match" and unallowed.part == "cat x"
