"""What a session reads from its profile, as plain values.

The profile (config/schema.py) is the file's schema: pydantic, strict, with an error
that names the key. A session needs a few dozen of its values, and a run with no profile
file and no CARETZ_* variable uses only the defaults and its flags, so those values are
kept here too, plain: `ProfileValues` from a validated profile (`of_profile`), or from
the defaults and the flags (`with_flags`) without building any model. The defaults below
are the schema's; tests/config/test_values.py holds the two together.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from caretz.guard.model import Mode
from caretz.guard.text_loop import TextLoopSettings
from caretz.lazy import lazy_module
from caretz.messages import Reasoning
from caretz.permissions.modes import DEFAULT_MODE, PermissionMode
from caretz.sandbox.policy import ModeName

if TYPE_CHECKING:
    from caretz.sandbox import allowlist as sandbox_allowlist
else:
    sandbox_allowlist = lazy_module("caretz.sandbox.allowlist")  # only with a list of hosts

if TYPE_CHECKING:
    from caretz.sandbox.allowlist import NetworkAllowlist

Output = Literal["text", "json", "detailed"]
RULE_KINDS = ("allow", "ask", "deny")


class SandboxValues(NamedTuple):
    """The profile's `sandbox` section (sandbox/config.py), with --sandbox and --add-dir."""

    mode: ModeName = "workspace-write"
    network: bool | str | tuple[str, ...] = False  # false/true, "off"/"on", or hosts
    add_dirs: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()
    read_only: tuple[str, ...] = ()
    allow_unix_sockets: tuple[str, ...] = ()
    allow_ssh_agent: bool = False
    hosts: tuple[tuple[str, str], ...] = ()  # names pinned to addresses

    @property
    def host_network(self) -> bool:
        """Whether commands share the host's network ("on" or true)."""
        return self.network is True or self.network == "on"

    def allowlist(self) -> NetworkAllowlist | None:
        """The hosts commands may reach through the proxy; None unless `network` is a list."""
        if not isinstance(self.network, tuple):
            return None
        return sandbox_allowlist.build_allowlist(list(self.network), dict(self.hosts))


class StatusLineValues(NamedTuple):
    """The profile's `statusLine`: the command, and how long it may take."""

    command: str
    timeout_s: float = 5.0


class WebFetchValues(NamedTuple):
    """The profile's `webFetch` section (web/config.py)."""

    enabled: bool = True
    max_bytes: int = 5 * 1024**2  # maxSize, "5MB"
    timeout_s: float = 30.0
    max_redirects: int = 5


class WebSearchValues(NamedTuple):
    """The profile's `webSearch` section (web/config.py)."""

    server: Literal["auto"] | bool = "auto"
    max_uses: int = 5
    backend: str | None = None
    url: str | None = None
    key_env: str | None = None  # where the backend's key is read from (None: searxng)
    max_results: int = 8
    timeout_s: float = 20.0


class TelemetryValues(NamedTuple):
    """The profile's `telemetry` section (config/schema.py, docs/telemetry.md)."""

    enabled: bool = False
    log_user_prompts: bool = False
    log_tool_details: bool = False


class ProfileValues(NamedTuple):
    """The values of a profile a session reads, every override applied."""

    reasoning: Reasoning | None = None
    max_tokens: int | None = None
    max_tool_calls: int | None = None
    max_budget_usd: float | None = None
    bash_timeout_s: float = 120.0
    stream_idle_timeout_s: float = 50.0
    first_byte_timeout_s: float = 50.0
    max_retries: int = 4
    output: Output = "text"
    system_prompt: str | None = None
    context_window: int | None = None
    guard_mode: Mode = "off"
    # loopGuard.detectors.streamText: the turn's cut of a reply that repeats itself, any mode.
    text_loop: TextLoopSettings = TextLoopSettings()
    # loopGuard.detectors.disallowedTools: (tool, its deny patterns) pairs.
    disallowed_tools: tuple[tuple[str, tuple[str, ...]], ...] = ()
    permission_mode: PermissionMode = DEFAULT_MODE
    permission_rules: tuple[tuple[str, ...], ...] = ((), (), ())  # allow, ask, deny
    checkpoints: bool = True
    checkpoint_size_cap: int = 5 * 1024**2  # checkpoints.maxFileSize, in bytes
    sandbox: SandboxValues = SandboxValues()
    shell_env: tuple[str, ...] = ()
    hooks: bool = False  # whether the profile's `hooks` section holds any
    mcp_servers: bool = False  # whether the profile names MCP servers
    web_fetch: WebFetchValues = WebFetchValues()
    web_search: WebSearchValues = WebSearchValues()
    status_line: StatusLineValues | None = None
    telemetry: TelemetryValues = TelemetryValues()

    def rule_lists(self) -> dict[str, list[str]]:
        """The profile's permission rules by kind, as `permissions` writes them."""
        return {
            kind: list(rules) for kind, rules in zip(RULE_KINDS, self.permission_rules, strict=True)
        }

    def disallowed(self) -> dict[str, list[str]]:
        """loopGuard.detectors.disallowedTools as the profile writes it."""
        return {tool: list(patterns) for tool, patterns in self.disallowed_tools}


def with_flags(flags: Mapping[str, Any]) -> ProfileValues:
    """The default profile's values with the flags applied (checked already, by
    config/flags.py's `plain_flags`)."""
    scalars = ("reasoning", "max_tool_calls", "max_budget_usd", "output")
    given = {name: flags[name] for name in scalars if flags.get(name) is not None}
    sandbox = SandboxValues()
    if flags.get("sandbox"):
        sandbox = sandbox._replace(mode=flags["sandbox"])
    if flags.get("add_dir"):
        sandbox = sandbox._replace(add_dirs=tuple(flags["add_dir"]))
    return ProfileValues(
        **given,
        guard_mode=flags.get("loop_guard") or "off",
        permission_mode=flags.get("permission_mode") or DEFAULT_MODE,
        sandbox=sandbox,
    )


def of_profile(profile: Any) -> ProfileValues:
    """The values of a validated `config.schema.Profile`, overrides applied already."""
    section, lists = profile.sandbox, profile.permissions.rule_lists()
    return ProfileValues(
        reasoning=profile.reasoning,
        max_tokens=profile.max_tokens,
        max_tool_calls=profile.max_tool_calls,
        max_budget_usd=profile.max_budget_usd,
        bash_timeout_s=profile.bash_timeout_s,
        stream_idle_timeout_s=profile.stream_idle_timeout_s,
        first_byte_timeout_s=profile.first_byte_timeout_s,
        max_retries=profile.max_retries,
        output=profile.output,
        system_prompt=profile.system_prompt,
        context_window=profile.context_window,
        guard_mode=profile.loop_guard.mode,
        text_loop=text_loop_values(profile.loop_guard.detectors.stream_text),
        disallowed_tools=tuple(
            (tool, tuple(patterns))
            for tool, patterns in profile.loop_guard.detectors.disallowed_tools.items()
        ),
        permission_mode=profile.permissions.mode,
        permission_rules=tuple(tuple(lists[kind]) for kind in RULE_KINDS),
        checkpoints=profile.checkpoints.enabled,
        checkpoint_size_cap=profile.checkpoints.max_file_size_bytes,
        sandbox=SandboxValues(
            mode=section.mode,
            network=tuple(section.network)
            if isinstance(section.network, list)
            else section.network,
            hosts=tuple(section.hosts.items()),
            add_dirs=tuple(section.add_dirs),
            hidden=tuple(section.hidden),
            read_only=tuple(section.read_only),
            allow_unix_sockets=tuple(section.allow_unix_sockets),
            allow_ssh_agent=section.allow_ssh_agent,
        ),
        shell_env=tuple(profile.shell_env),
        hooks=bool(profile.hooks),
        mcp_servers=bool(profile.mcp_servers),
        web_fetch=web_fetch_values(profile.web_fetch),
        web_search=web_search_values(profile.web_search),
        status_line=status_line_values(profile.status_line),
        telemetry=telemetry_values(profile.telemetry),
    )


def text_loop_values(section: Any) -> TextLoopSettings:
    """A validated `guard.detectors_config.StreamTextConfig` as plain values."""
    return TextLoopSettings(
        section.enabled, section.min_period, section.max_repeats, section.max_repeats_in_code
    )


def status_line_values(section: Any) -> StatusLineValues | None:
    """A validated `config.schema.StatusLineConfig` (or None) as plain values."""
    if section is None:
        return None
    return StatusLineValues(section.command, section.timeout_s)


def web_fetch_values(section: Any) -> WebFetchValues:
    """A validated `web.config.WebFetchConfig` as plain values."""
    return WebFetchValues(
        section.enabled, section.max_bytes, section.timeout_s, section.max_redirects
    )


def web_search_values(section: Any) -> WebSearchValues:
    """A validated `web.config.WebSearchConfig` as plain values."""
    return WebSearchValues(
        server=section.server,
        max_uses=section.max_uses,
        backend=section.backend,
        url=section.url,
        key_env=section.key_env,
        max_results=section.max_results,
        timeout_s=section.timeout_s,
    )


def telemetry_values(section: Any) -> TelemetryValues:
    """A validated `config.schema.TelemetryConfig` as plain values."""
    return TelemetryValues(section.enabled, section.log_user_prompts, section.log_tool_details)
