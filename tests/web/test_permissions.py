"""web_fetch and web_search under the permission check: what asks, what runs, what a
headless run says, what "yes, always" saves, and the addresses' classes."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from caretz.messages import ToolCall
from caretz.permissions.modes import decide
from caretz.permissions.policy import Decision, RuleSet
from caretz.permissions.proposals import propose_rules
from caretz.permissions.rules import RuleError, parse_rule
from caretz.tools.asking import Answer, Question
from caretz.tools.permission import SessionPermissions, allow_hint
from caretz.tools.policy import CancelToolCall
from caretz.web.address import not_public

NO_RULE = Decision(outcome="no-match", reason="no rule covers web_fetch")


@pytest.mark.parametrize(
    ("mode", "action"),
    [("auto", "ask"), ("ask", "ask"), ("read-only", "ask"), ("yolo", "run")],
)
def test_a_fetch_no_rule_covers_asks_in_every_mode_but_yolo(mode, action):
    verdict = decide(mode, "fetch", NO_RULE, tool="web_fetch")
    assert verdict.action == action
    if action == "ask":
        assert verdict.reason == "web_fetch reaches the network outside the sandbox"


def test_read_only_mode_lets_rules_decide_a_fetch_but_refuses_other_outside_tools():
    allow = Decision(
        outcome="allow", reason="allowed", rule=parse_rule("WebFetch(domain:a.org)", "allow", "t")
    )
    assert decide("read-only", "fetch", allow, tool="web_fetch").action == "run"
    assert decide("read-only", "external", allow, tool="mcp__x__y").action == "refuse"


def test_domain_rules_cover_subdomains_and_are_written_as_hosts(tmp_path: Path):
    rules = RuleSet([parse_rule("WebFetch(domain:*.Python.org.)", "allow", "t")], tmp_path)
    for url, outcome in [
        ("https://docs.python.org/3/", "allow"),
        ("https://python.org", "allow"),
        ("https://python.org.evil.net/", "no-match"),
        ("http://[::1", "no-match"),  # an unreadable URL matches nothing, never crashes
    ]:
        assert rules.check("web_fetch", {"url": url}, tmp_path).outcome == outcome, url
    ipv6 = RuleSet([parse_rule("WebFetch(domain:[::1])", "deny", "t")], tmp_path)
    assert ipv6.check("web_fetch", {"url": "http://[::1]:8000/"}, tmp_path).outcome == "deny"
    for bad in ("WebFetch(domain:a.org/path)", "WebFetch(domain:)", "WebFetch(a.org)"):
        with pytest.raises(RuleError):
            parse_rule(bad, "allow", "t")


def test_always_saves_the_host_of_the_url(tmp_path: Path):
    empty = RuleSet([], tmp_path)
    proposal = propose_rules("web_fetch", {"url": "https://Docs.Python.org/3/x"}, tmp_path, empty)
    assert proposal.rules == ("WebFetch(domain:docs.python.org)",)
    assert propose_rules("web_fetch", {"url": "http://[::1]:80/"}, tmp_path, empty).rules == (
        "WebFetch(domain:[::1])",
    )
    assert propose_rules("web_fetch", {"url": "nonsense"}, tmp_path, empty).unsavable
    assert propose_rules("web_search", {"query": "x"}, tmp_path, empty).rules == ("WebSearch",)


def test_a_headless_refusal_names_the_rule_and_the_flag(tmp_path: Path):
    permissions = SessionPermissions(tmp_path)  # nobody asks
    call = ToolCall(id="c1", name="web_fetch", arguments={"url": "https://docs.python.org/3/"})

    with pytest.raises(CancelToolCall) as refused:
        permissions.check(call, call.arguments, "fetch", tmp_path)

    assert 'add WebFetch(domain:docs.python.org) to "permissions.allow"' in refused.value.reason
    assert allow_hint(permissions.denials) == (
        "denied for want of someone to ask: allow it for a run with --allowed-tools "
        "'WebFetch(domain:docs.python.org)', or for good under permissions.allow "
        "(profiles.json or .caretz/settings.json)"
    )


def test_the_user_is_asked_about_a_new_domain_and_always_saves_it(tmp_path: Path):
    questions: list[Question] = []

    class Always:
        interactive = True

        def __call__(self, question: Question) -> Answer:
            questions.append(question)
            return Answer("always")

    permissions = SessionPermissions(tmp_path, asker=Always())
    call = ToolCall(id="c1", name="web_fetch", arguments={"url": "https://docs.python.org/3/"})
    permissions.check(call, call.arguments, "fetch", tmp_path)
    again = ToolCall(
        id="c2", name="web_fetch", arguments={"url": "https://docs.python.org/3/library/"}
    )
    permissions.check(again, again.arguments, "fetch", tmp_path)

    assert len(questions) == 1  # the saved rule covers the domain from then on
    assert questions[0].summary == "https://docs.python.org/3/"
    assert questions[0].saves == ("WebFetch(domain:docs.python.org)",)
    settings = (tmp_path / ".caretz" / "settings.json").read_text()
    assert "WebFetch(domain:docs.python.org)" in settings


@pytest.mark.parametrize(
    "address",
    ["10.0.0.1", "172.16.5.4", "192.168.1.1", "127.0.0.1", "169.254.169.254", "100.64.0.1",
     "0.0.0.0", "224.0.0.251", "::1", "fe80::1", "fc00::1", "::ffff:192.168.0.1",
     "2002:c0a8:0101::1", "64:ff9b::a00:1", "ff02::1", "240.0.0.1"],
)  # fmt: skip
def test_addresses_that_are_not_public(address):
    assert not_public(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize("address", ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111"])
def test_public_addresses(address):
    assert not_public(ipaddress.ip_address(address)) is None


def test_an_address_rule_covers_that_address_only(tmp_path: Path):
    rules = RuleSet([parse_rule("WebFetch(domain:0.1)", "allow", "t")], tmp_path)
    assert rules.check("web_fetch", {"url": "http://10.0.0.1/"}, tmp_path).outcome == "no-match"
    named = RuleSet([parse_rule("WebFetch(domain:10.0.0.1)", "allow", "t")], tmp_path)
    assert named.check("web_fetch", {"url": "http://10.0.0.1:8/"}, tmp_path).outcome == "allow"


def test_hooks_know_the_web_tools_by_claude_code_s_names():
    from caretz.hooks.matching import claude_tool_name, matches

    assert claude_tool_name("web_fetch") == "WebFetch"
    assert matches("WebFetch|WebSearch", "web_search", claude_tool_name("web_search"))
