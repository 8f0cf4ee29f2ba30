"""The rule syntax: what a rule such as `Bash(git push:*)` or `Read(./.env*)` says.

A rule names a tool, and optionally what the call must be about:

- a bare tool name (`Bash`, `Read`, `Edit`, `Write`, `Glob`, `Grep`, `WebFetch`…, any case);
- `Bash(npm run test)`: exactly that command; `Bash(git push:*)` or `Bash(git push *)`:
  that command with any words after it; a ` * ` word stands for any words;
- `Read(path)`, `Edit(path)`, `Write(path)`: a gitignore-style path glob (see paths.py);
- `mcp__server__tool`, `mcp__server__*`, `mcp__server`: tools of an MCP server;
- `WebFetch(domain:example.com)`: the web_fetch tool on that host and its subdomains;
  `WebSearch`: the web_search tool.

`Read` rules cover the tools that read files (read, glob, grep); `Edit` and `Write`
rules both cover the tools that change files (edit, write): a file one may not write
must not be edited either, and the other way round. A rule caretz cannot read raises
RuleError naming the rule and the problem: it is never ignored.
"""

from __future__ import annotations

import re
from typing import Literal

from caretz.lazy_dataclass import lazy_dataclass
from caretz.permissions.legacy import LegacyPattern
from caretz.permissions.paths import PathGlob
from caretz.permissions.patterns import CommandPattern, parse_command_pattern
from caretz.permissions.project import RuleError as RuleError  # a light module: see there

Behavior = Literal["allow", "ask", "deny"]
BEHAVIORS: tuple[Behavior, ...] = ("deny", "ask", "allow")

READING = frozenset({"read", "glob", "grep"})
CHANGING = frozenset({"edit", "write", "multi_edit"})
# Rule tool names → the caretz tools they cover. Claude Code's names, and the loop
# guard's aliases (terminal, write_file…) that disallowedTools keys may use.
TOOL_FAMILIES: dict[str, frozenset[str]] = {
    "bash": frozenset({"bash"}),
    "terminal": frozenset({"bash"}),
    "shell": frozenset({"bash"}),
    "run_shell_command": frozenset({"bash"}),
    "read": READING,
    "read_file": READING,
    "edit": CHANGING,
    "write": CHANGING,
    "multiedit": CHANGING,
    "multi_edit": CHANGING,
    "notebookedit": CHANGING,
    "edit_file": CHANGING,
    "write_file": CHANGING,
    "str_replace_editor": CHANGING,
    "glob": frozenset({"glob"}),
    "grep": frozenset({"grep"}),
    "ls": frozenset({"glob"}),
    "webfetch": frozenset({"web_fetch"}),
    "web_fetch": frozenset({"web_fetch"}),
    "websearch": frozenset({"web_search"}),
    "web_search": frozenset({"web_search"}),
    "task": frozenset({"task"}),
    "todowrite": frozenset({"todowrite"}),
    # MCP resources (Claude Code's tool names too); rules on mcp__server cover them as well.
    "read_mcp_resource": frozenset({"read_mcp_resource"}),
    "readmcpresourcetool": frozenset({"read_mcp_resource"}),
    "list_mcp_resources": frozenset({"list_mcp_resources"}),
    "listmcpresourcestool": frozenset({"list_mcp_resources"}),
}
_NOT_PATH_RULES = {"bash", "terminal", "shell", "run_shell_command", "glob", "grep", "ls",
                   "webfetch", "web_fetch", "websearch", "web_search", "task", "todowrite",
                   "read_mcp_resource", "readmcpresourcetool", "list_mcp_resources",
                   "listmcpresourcestool"}  # fmt: skip
_PATH_RULES = frozenset(TOOL_FAMILIES) - _NOT_PATH_RULES
_RULE = re.compile(r"\s*([A-Za-z][A-Za-z0-9_\-]*\*?)\s*(?:\((.*)\))?\s*", re.DOTALL)
_MCP = re.compile(r"mcp__[A-Za-z0-9_\-]+(?:__(?:[A-Za-z0-9_\-]+|\*))?")


@lazy_dataclass(frozen=True, kw_only=True)
class Rule:
    text: str  # as written
    behavior: Behavior
    source: str  # where it is written: a file, or a profile key
    tools: frozenset[str]  # the caretz tools it covers (empty: see tool_pattern)
    tool_pattern: str | None = None  # a glob over tool names (mcp__server__*)
    command: CommandPattern | None = None
    path: PathGlob | None = None
    domain: str | None = None
    legacy: LegacyPattern | None = None  # a disallowedTools pattern

    def covers(self, tool: str) -> bool:
        if tool in self.tools:
            return True
        return self.tool_pattern is not None and _tool_glob(self.tool_pattern, tool)

    @property
    def whole_tool(self) -> bool:
        return (
            self.command is None
            and self.path is None
            and self.domain is None
            and (self.legacy is None)
        )


def _tool_glob(pattern: str, tool: str) -> bool:
    if pattern.endswith("*"):
        return tool.startswith(pattern[:-1])
    return tool == pattern or tool.startswith(pattern + "__")


def parse_rule(
    text: str, behavior: Behavior, source: str, extra_tools: frozenset[str] = frozenset()
) -> Rule:
    """Read one rule. `extra_tools`: more tool names the session has (plan, jobs…)."""
    if not isinstance(text, str):
        raise RuleError(f"{source}: permissions.{behavior} holds {text!r}, not a rule string")
    match = _RULE.fullmatch(text)
    if match is None:
        raise RuleError(_problem(text, source, "write a tool name, e.g. Bash or Bash(npm test)"))
    name, specifier = match.group(1), match.group(2)
    lowered = name.lower()
    if _MCP.fullmatch(name):
        if specifier is not None:
            raise RuleError(_problem(text, source, "MCP tool rules take no (…) part"))
        return Rule(
            text=text, behavior=behavior, source=source, tools=frozenset(), tool_pattern=name
        )
    if lowered in extra_tools and lowered not in TOOL_FAMILIES:
        if specifier is not None:
            raise RuleError(_problem(text, source, f"{name} rules take no (…) part"))
        return Rule(text=text, behavior=behavior, source=source, tools=frozenset({lowered}))
    tools = TOOL_FAMILIES.get(lowered)
    if tools is None:
        known = "Bash, Read, Edit, Write, Glob, Grep, WebFetch, mcp__server__tool"
        raise RuleError(_problem(text, source, f"unknown tool {name!r} (known: {known})"))
    if specifier is None or specifier.strip() in ("", "*"):
        if specifier is not None and not specifier.strip():
            raise RuleError(_problem(text, source, f"empty (); write {name} for every call"))
        return Rule(text=text, behavior=behavior, source=source, tools=tools)
    try:
        return _with_specifier(text, behavior, source, lowered, tools, specifier)
    except ValueError as error:
        raise RuleError(_problem(text, source, str(error))) from None


def _with_specifier(
    text: str, behavior: Behavior, source: str, name: str, tools: frozenset[str], spec: str
) -> Rule:
    if tools == TOOL_FAMILIES["bash"]:
        return Rule(
            text=text,
            behavior=behavior,
            source=source,
            tools=tools,
            command=parse_command_pattern(spec),
        )
    if name in _PATH_RULES:
        return Rule(
            text=text,
            behavior=behavior,
            source=source,
            tools=tools,
            path=PathGlob.parse(spec, behavior == "allow"),
        )
    if tools == TOOL_FAMILIES["webfetch"]:
        return Rule(text=text, behavior=behavior, source=source, tools=tools, domain=_domain(spec))
    if name in ("glob", "grep", "ls"):
        raise ValueError(f"{name} rules take no (…) part; a Read(…) rule limits what it sees")
    raise ValueError(f"{name} rules take no (…) part")


def domain_rule(host: str) -> str:
    """The rule that names `host` for web_fetch (an IPv6 address in brackets)."""
    return f"WebFetch(domain:[{host}])" if ":" in host else f"WebFetch(domain:{host})"


def _domain(spec: str) -> str:
    """`domain:Example.COM.` → `example.com`; `domain:[::1]` → `::1` (as a URL's host reads);
    `domain:*.example.com` → `example.com` (a domain rule covers its subdomains anyway)."""
    text = spec.strip()
    if not text.startswith("domain:"):
        raise ValueError("write WebFetch(domain:example.com)")
    domain = text[7:].strip().lower().rstrip(".").removeprefix("*.")
    if domain.startswith("[") and domain.endswith("]"):
        domain = domain[1:-1]
    if not domain or any(char in domain for char in "/?#@ *"):
        raise ValueError("write WebFetch(domain:example.com): a host name or an address alone")
    return domain


def _problem(text: str, source: str, what: str) -> str:
    return f"{source}: the rule {text!r} cannot be read: {what}"
