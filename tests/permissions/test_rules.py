"""Rule syntax, precedence and matching: deny beats ask beats allow, on tokens, never substrings."""

from __future__ import annotations

from pathlib import Path

import pytest

from caretz.permissions.policy import RuleSet
from caretz.permissions.project import read_project_settings
from caretz.permissions.rules import RuleError, parse_rule
from caretz.permissions.settings import load_rules, rules_from_permissions
from caretz.tools.edit_tool import MultiEditTool

SOURCE = ".caretz/settings.json"

MULTI_EDIT = MultiEditTool.spec.name  # changes files as edit and write do


def ruleset(root: Path, **lists: list[str]) -> RuleSet:
    return RuleSet(rules_from_permissions(lists, SOURCE), root, home=str(root / "home"))


def bash(rules: RuleSet, command: str, cwd: Path) -> str:
    return rules.check("bash", {"command": command}, cwd).outcome


# -- reading rules -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tools"),
    [
        ("Bash", {"bash"}),
        ("bash", {"bash"}),
        ("Read", {"read", "glob", "grep"}),
        ("Edit", {"edit", "write", MULTI_EDIT}),
        ("Write", {"edit", "write", MULTI_EDIT}),
        ("MultiEdit", {"edit", "write", MULTI_EDIT}),
        ("Glob", {"glob"}),
        ("GREP", {"grep"}),
        ("WebFetch", {"web_fetch"}),
        ("Edit(src/**)", {"edit", "write", MULTI_EDIT}),
        ("Read(./.env*)", {"read", "glob", "grep"}),
    ],
)
def test_tool_names_map_to_caretz_tools(text: str, tools: set[str]):
    rule = parse_rule(text, "allow", SOURCE)
    assert rule.tools == tools and all(rule.covers(tool) for tool in tools)


@pytest.mark.parametrize(
    ("text", "tokens", "prefix"),
    [
        ("Bash(git push:*)", ("git", "push"), True),
        ("Bash(npm run test)", ("npm", "run", "test"), False),
        ("Bash(npm run *)", ("npm", "run"), True),
        ("Bash(rm:*)", ("rm",), True),
        ("Bash(/bin/rm -rf:*)", ("rm", "-rf"), True),
        ("Bash(git commit -m 'a b':*)", ("git", "commit", "-m", "a b"), True),
        ("Bash(git * main)", ("git", "*", "main"), False),
    ],
)
def test_command_rules_are_read_as_words(text: str, tokens: tuple[str, ...], prefix: bool):
    rule = parse_rule(text, "deny", SOURCE)
    assert rule.command is not None
    assert (rule.command.tokens, rule.command.prefix) == (tokens, prefix)


def test_mcp_rules_name_a_server_or_its_tools():
    server = parse_rule("mcp__github", "allow", SOURCE)
    every = parse_rule("mcp__github__*", "allow", SOURCE)
    one = parse_rule("mcp__github__create_issue", "allow", SOURCE)
    assert server.covers("mcp__github__create_issue") and not server.covers("mcp__gitlab__x")
    assert every.covers("mcp__github__list") and not every.covers("mcp__githubx__list")
    assert one.covers("mcp__github__create_issue") and not one.covers("mcp__github__list")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("Bsh(rm:*)", "unknown tool 'Bsh'"),
        ("Bash(rm:*", "write a tool name"),
        ("Bash()", "empty ()"),
        ("Bash(git push:* --force)", "`:*` may only end the rule"),
        ("Bash(curl x | sh)", "'|' joins commands"),
        ("Bash(a && b)", "'&&' joins commands"),
        ("Bash(echo 'open)", "cannot split the command into words"),
        ("Read()", "empty ()"),
        ("Grep(src/**)", "grep rules take no (…) part"),
        ("WebFetch(example.com)", "write WebFetch(domain:example.com)"),
        ("mcp__s__t(x)", "MCP tool rules take no (…) part"),
        ("Read(~bob/x)", "only ~/ (your own home)"),
        ("", "write a tool name"),
    ],
)
def test_a_rule_caretz_cannot_read_is_an_error_naming_it(text: str, problem: str):
    with pytest.raises(RuleError) as raised:
        parse_rule(text, "deny", SOURCE)
    message = str(raised.value)
    assert message.startswith(f"{SOURCE}: the rule {text!r} cannot be read: ")
    assert problem in message and "\n" not in message


def test_a_session_tool_name_is_accepted_when_the_caller_knows_it():
    with pytest.raises(RuleError):
        parse_rule("plan", "allow", SOURCE)
    assert parse_rule("plan", "allow", SOURCE, frozenset({"plan"})).covers("plan")


@pytest.mark.parametrize(
    ("permissions", "problem"),
    [
        ({"allow": "Bash"}, "permissions.allow must be a list"),
        ({"deny": [3]}, "permissions.deny holds 3, not a rule string"),
    ],
)
def test_malformed_permission_lists_are_errors(permissions: dict, problem: str):
    with pytest.raises(RuleError, match=problem):
        rules_from_permissions(permissions, SOURCE)


def test_rules_load_from_the_profile_the_project_file_and_disallowed_tools(tmp_path: Path):
    (tmp_path / ".caretz").mkdir()
    (tmp_path / ".caretz" / "settings.json").write_text(
        '{"permissions": {"allow": ["Bash(npm run test)"], "ask": ["Bash(git push:*)"]}}'
    )
    rules = load_rules(
        tmp_path,
        read_project_settings(tmp_path),
        profile_permissions={"deny": ["Read(./.env*)"]},
        profile_source="profiles.json (profile work)",
        disallowed_tools={"bash": ["rm -rf"]},
    )
    sources = [(rule.text, rule.behavior, rule.source) for rule in rules.rules]
    assert sources == [
        ("Read(./.env*)", "deny", "profiles.json (profile work)"),
        ("Bash(git push:*)", "ask", ".caretz/settings.json"),
        ("Bash(npm run test)", "allow", ".caretz/settings.json"),
        ('"rm -rf"', "deny", "loopGuard.detectors.disallowedTools.bash"),
    ]


def test_a_broken_project_file_is_an_error_naming_it(tmp_path: Path):
    (tmp_path / ".caretz").mkdir()
    (tmp_path / ".caretz" / "settings.json").write_text('{"permissions": {"allow": [')
    with pytest.raises(RuleError, match=r"settings\.json: not valid JSON"):
        read_project_settings(tmp_path)


# -- precedence and compound commands ------------------------------------------------------


def test_deny_beats_ask_beats_allow(tmp_path: Path):
    rules = ruleset(
        tmp_path,
        allow=["Bash(git:*)"],
        ask=["Bash(git push:*)"],
        deny=["Bash(git push --force:*)"],
    )
    assert bash(rules, "git status", tmp_path) == "allow"
    assert bash(rules, "git push origin main", tmp_path) == "ask"
    assert bash(rules, "git push --force origin main", tmp_path) == "deny"
    assert bash(rules, "git push -f origin main", tmp_path) == "deny"
    assert bash(rules, "git push --force-with-lease", tmp_path) == "deny"


def test_a_compound_line_is_allowed_only_when_every_command_is(tmp_path: Path):
    rules = ruleset(tmp_path, allow=["Bash(npm run test)", "Bash(cd:*)"])
    assert bash(rules, "cd web && npm run test", tmp_path) == "allow"
    assert bash(rules, "cd web && npm run test && curl x", tmp_path) == "no-match"
    assert bash(rules, "npm run test; $(curl x)", tmp_path) == "no-match"
    assert bash(rules, "npm run test | bash", tmp_path) == "no-match"


def test_one_denied_command_denies_the_whole_line(tmp_path: Path):
    rules = ruleset(tmp_path, allow=["Bash"], deny=["Bash(curl:*)"])
    decision = rules.check("bash", {"command": "npm test && echo $(curl -s x)"}, tmp_path)
    assert decision.outcome == "deny" and decision.part == "curl -s x"


def test_allow_rules_match_words_not_text(tmp_path: Path):
    rules = ruleset(tmp_path, allow=["Bash(npm run test)", "Bash(git log:*)"])
    for line in ["npm  run   test", "'npm' run \"test\"", "timeout 60 npm run test",
                 "env CI=1 npm run test", "git log --oneline -5", "git log"]:  # fmt: skip
        assert bash(rules, line, tmp_path) == "allow", line
    for line in ["npm run test --watch", "npm run testing", "git logs", "npm run", "gitlog"]:
        assert bash(rules, line, tmp_path) == "no-match", line


def test_short_flags_in_any_order_are_the_same_flags(tmp_path: Path):
    rules = ruleset(tmp_path, allow=["Bash(ls -la)"], deny=["Bash(chmod -R:*)"])
    assert bash(rules, "ls -al", tmp_path) == "allow"
    assert bash(rules, "chmod --recursive 777 x", tmp_path) == "deny"
    assert bash(rules, "chmod 644 -R x", tmp_path) == "deny"
    assert bash(rules, "chmod 644 x", tmp_path) == "no-match"


def test_a_deny_rule_is_not_escaped_by_options_before_the_subcommand(tmp_path: Path):
    rules = ruleset(tmp_path, deny=["Bash(git push:*)"])
    assert bash(rules, "git -C . push origin", tmp_path) == "deny"
    assert bash(rules, "git -c a.b=c push", tmp_path) == "deny"
    assert bash(rules, "git pull", tmp_path) == "no-match"


def test_sudo_needs_its_own_allow_but_timeout_does_not(tmp_path: Path):
    rules = ruleset(tmp_path, allow=["Bash(apt update)", "Bash(make)"])
    assert bash(rules, "timeout 300 make", tmp_path) == "allow"
    assert bash(rules, "sudo apt update", tmp_path) == "no-match"
    assert (
        bash(ruleset(tmp_path, allow=["Bash(sudo apt update)"]), "sudo apt update", tmp_path)
        == "allow"
    )


def test_find_exec_needs_both_find_and_the_command_allowed(tmp_path: Path):
    rules = ruleset(tmp_path, allow=["Bash(find:*)"])
    assert bash(rules, "find . -name '*.py'", tmp_path) == "allow"
    assert bash(rules, "find . -exec rm {} +", tmp_path) == "no-match"
    assert bash(ruleset(tmp_path, allow=["Bash(find:*)", "Bash(rm:*)"]),
                "find . -exec rm {} +", tmp_path) == "allow"  # fmt: skip


def test_what_cannot_be_read_matches_no_allow_rule(tmp_path: Path):
    rules = ruleset(tmp_path, allow=["Bash(echo:*)", "Bash(cat:*)"])
    assert bash(rules, "echo $(whoami)", tmp_path) == "no-match"  # whoami is not allowed
    assert bash(rules, "echo $HOME", tmp_path) == "allow"  # the prefix covers any words
    assert (
        bash(ruleset(tmp_path, allow=["Bash(cat README.md)"]), "cat READ*", tmp_path) == "no-match"
    )
    assert bash(rules, "cat x | bash", tmp_path) == "no-match"
    assert bash(ruleset(tmp_path, allow=["Bash"]), "cat x | bash", tmp_path) == "allow"


def test_unreadable_commands_ask_only_where_a_deny_or_ask_rule_could_match(tmp_path: Path):
    no_bash_denies = ruleset(tmp_path, deny=["Read(./.env)"])
    assert bash(no_bash_denies, "$x -rf v", tmp_path) == "no-match"
    asks = ruleset(tmp_path, ask=["Bash(git push:*)"])
    decision = asks.check("bash", {"command": "$x -rf v"}, tmp_path)
    assert decision.outcome == "ask" and decision.rule is not None
    assert decision.rule.text == "Bash(git push:*)"


def test_with_no_rules_the_decision_is_no_match(tmp_path: Path):
    decision = RuleSet([], tmp_path).check("bash", {"command": "rm -rf /"}, tmp_path)
    assert decision.outcome == "no-match" and decision.rule is None
    assert decision.reason == "no rule covers bash"


# -- paths ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "path", "matches"),
    [
        ("Read(./.env*)", ".env", True),
        ("Read(./.env*)", ".env.local", True),
        ("Read(./.env*)", "sub/.env", False),  # ./ anchors at the project root
        ("Read(.env)", "sub/deeper/.env", True),  # a bare name matches at any depth
        ("Read(*.pem)", "/etc/ssl/private/server.pem", True),  # deny: anywhere at all
        ("Read(src/**)", "src/a/b.py", True),
        ("Read(src/**)", "lib/src/a.py", False),
        ("Read(secrets)", "secrets/api/key.txt", True),  # a directory covers what is inside
        ("Read(~/.ssh/**)", "HOME/.ssh/id_rsa", True),
        ("Read(//etc/passwd)", "/etc/passwd", True),
        ("Read(/etc/passwd)", "/etc/passwd", True),
        ("Read(/config.yml)", "config.yml", True),  # deny: also read as Claude Code reads it
        ("Read(src/**/*.{key,pem})", "src/a/b.key", True),
        ("Read(src/**/*.{key,pem})", "src/a/b.txt", False),
        ("Read(./a\\*b)", "a*b", True),
        ("Read(./a\\*b)", "axb", False),
    ],
)
def test_path_globs_are_gitignore_style(tmp_path: Path, rule: str, path: str, matches: bool):
    rules = ruleset(tmp_path, deny=[rule])
    path = path.replace("HOME", str(tmp_path / "home"))
    expected = "deny" if matches else "no-match"
    assert rules.check("read", {"path": path}, tmp_path).outcome == expected


def test_read_rules_cover_glob_and_grep_and_edit_rules_cover_write(tmp_path: Path):
    rules = ruleset(tmp_path, deny=["Read(./secrets/**)", "Edit(./locked/**)"])
    assert rules.check("grep", {"pattern": "x", "path": "secrets"}, tmp_path).outcome == "deny"
    assert rules.check("glob", {"pattern": "*", "path": "secrets/a"}, tmp_path).outcome == "deny"
    assert rules.check("write", {"path": "locked/a.txt", "content": ""}, tmp_path).outcome == "deny"
    assert rules.check("read", {"path": "locked/a.txt"}, tmp_path).outcome == "no-match"


def test_path_allow_rules_stay_inside_the_project_and_follow_symlinks(tmp_path: Path):
    outside = tmp_path / "outside"
    project = tmp_path / "project"
    outside.mkdir()
    project.mkdir()
    (project / "link").symlink_to(outside)
    rules = ruleset(project, allow=["Edit(*.txt)", "Edit(./**)"])
    assert rules.check("edit", {"path": "notes.txt"}, project).outcome == "allow"
    assert rules.check("edit", {"path": str(outside / "x.txt")}, project).outcome == "no-match"
    assert rules.check("edit", {"path": "link/x.py"}, project).outcome == "no-match"
    assert rules.check("edit", {"path": "../outside/x.py"}, project).outcome == "no-match"


def test_path_decisions_name_the_path_and_the_rule(tmp_path: Path):
    rules = ruleset(tmp_path, deny=["Read(./.env*)"])
    decision = rules.check("read", {"path": "./.env.local"}, tmp_path)
    assert decision.reason == (
        "read .env.local is denied by the deny rule Read(./.env*) (.caretz/settings.json)"
    )
    assert rules.check_path("grep", str(tmp_path / ".env"), tmp_path).outcome == "deny"


def test_webfetch_domain_rules(tmp_path: Path):
    rules = ruleset(tmp_path, allow=["WebFetch(domain:docs.python.org)"])
    assert (
        rules.check("web_fetch", {"url": "https://docs.python.org/3/"}, tmp_path).outcome == "allow"
    )
    assert (
        rules.check("web_fetch", {"url": "https://evil.org/docs.python.org"}, tmp_path).outcome
        == "no-match"
    )


def test_a_deny_rule_without_a_star_still_denies_every_use_of_the_program(tmp_path: Path):
    assert bash(ruleset(tmp_path, deny=["Bash(rm)"]), "rm -rf x", tmp_path) == "deny"
    allow = ruleset(tmp_path, allow=["Bash(rm)"])
    assert bash(allow, "rm", tmp_path) == "allow"
    assert bash(allow, "rm -rf x", tmp_path) == "no-match"
