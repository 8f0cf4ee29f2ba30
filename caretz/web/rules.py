"""What the session's rules say about what the permission check before a fetch did not
see: a redirect to another host, and a host or address that is not public.

The tool reads the rules when it runs (`RulesSource`), not when it was built, so a rule
saved with "yes, always" or a custom command's `allowed-tools` counts at once.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from caretz.permissions.policy import Decision, RuleSet

RulesSource = Callable[[], "RuleSet | None"]
TOOL = "web_fetch"


def named_by_allow_rule(rules: RuleSet | None, name: str) -> bool:
    """Whether an allow rule for web_fetch names exactly `name`, a host or an address.

    A rule for a parent domain (`WebFetch(domain:corp.example)`) does not reach a private
    address of one of its hosts, nor does a bare `WebFetch`: the exception is written
    out for the one host."""
    if rules is None:
        return False
    wanted = name.strip("[]").lower().rstrip(".")
    return any(
        rule.behavior == "allow" and rule.covers(TOOL) and rule.domain == wanted
        for rule in rules.rules
    )


def redirect_decision(rules: RuleSet | None, url: str, cwd: Path) -> Decision | None:
    """The rules' word on a redirect to `url` on another host (None: no rules at all)."""
    if rules is None:
        return None
    return rules.check(TOOL, {"url": url}, cwd)
