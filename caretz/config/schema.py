"""The sections of profiles.json: profiles, providers (with `local`) and prices.

docs/configuration.md is the reference for every key; the loop guard's section
lives with the guard (`caretz.guard.config`), the goal's with the goal (`caretz.goal.config`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, field_validator, model_validator

from caretz.config.flags import check_url
from caretz.config.values import Output
from caretz.config_base import parse_duration, parse_size
from caretz.config_section import PositiveDuration, PositiveSize, Section
from caretz.goal.config import GoalConfig
from caretz.guard.config import LoopGuardConfig
from caretz.hooks.config import HooksConfig
from caretz.mcp_client.config import McpConfig, ServerTable
from caretz.messages import ProtocolName, Reasoning
from caretz.permissions.modes import DEFAULT_MODE, PermissionMode
from caretz.pricing import Price
from caretz.providers.entry import ProviderEntry
from caretz.providers.local import BUILTIN_TEMPLATE, LocalModel
from caretz.providers.resolve import DEFAULT_MODEL
from caretz.sandbox.config import SandboxConfig
from caretz.web.config import WebFetchConfig, WebSearchConfig

BaseUrl = Annotated[str, AfterValidator(check_url)]
ModelRef = Annotated[str, Field(min_length=1)]
ToolCallLimit = Annotated[int, Field(ge=1)]
BudgetUsd = Annotated[float, Field(gt=0)]
ToolChoice = Annotated[str, Field(min_length=1)]  # "auto", "required", "none" or a tool name
CheckEvery = Annotated[int, Field(ge=0)]
GoalTurns = Annotated[int, Field(ge=1)]


class LocalConfig(Section):
    """A provider's `local` section: a GGUF model on a llama.cpp server caretz runs."""

    model: str | None = None  # None: the model ID of `provider/model` is the file
    chat_template: str | None = None
    context_size: int | None = Field(None, ge=256)
    threads: int | None = Field(None, ge=1)
    load_timeout: PositiveDuration = "5m"

    def to_local(self, config_dir: Path | None) -> LocalModel:
        template = self.chat_template
        if template and template != BUILTIN_TEMPLATE:
            template = _from_dir(config_dir, template)
        return LocalModel(
            model=_from_dir(config_dir, self.model) if self.model else None,
            chat_template=template,
            context_size=self.context_size,
            threads=self.threads,
            load_timeout_s=parse_duration(self.load_timeout),
        )


def _from_dir(config_dir: Path | None, name: str) -> str:
    """A path from profiles.json: relative ones are relative to the file's folder."""
    path = Path(name).expanduser()
    if config_dir is None or path.is_absolute():
        return str(path)
    return str(config_dir / path)


def _protocol_alias(value: Any) -> Any:
    return "responses" if value == "openai-responses" else value


# "openai-responses" is another spelling of "responses" (OpenAI's Responses API).
Protocol = Annotated[ProtocolName, BeforeValidator(_protocol_alias)]


class ProviderConfig(Section):
    protocol: Protocol | None = None  # required, except with `local` (then "openai")
    base_url: BaseUrl | None = None  # required, except with `local`
    api_key_env: str | None = None  # None: the endpoint needs no key
    base_url_env: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    extra_body: dict[str, Any] = Field(default_factory=dict)
    tool_choice: ToolChoice | None = None
    tool_call_prefix: str | None = None
    local: LocalConfig | None = None

    @model_validator(mode="after")
    def _endpoint(self) -> ProviderConfig:
        if self.local is not None:
            if self.base_url is not None:
                raise ValueError("set either baseUrl (a server you run) or local, not both")
            return self
        missing = [
            key
            for key, value in (("protocol", self.protocol), ("baseUrl", self.base_url))
            if value is None
        ]
        if missing:
            verb = "is" if len(missing) == 1 else "are"
            raise ValueError(
                f"{' and '.join(missing)} {verb} required (or a local section for a GGUF "
                f"model caretz runs itself)"
            )
        return self

    def to_entry(self, name: str, config_dir: Path | None = None) -> ProviderEntry:
        local = self.local.to_local(config_dir) if self.local is not None else None
        return ProviderEntry(
            name=name,
            protocol=self.protocol or "openai",
            base_url=self.base_url or "http://127.0.0.1:0/v1",  # local: the port comes at start
            api_key_env=self.api_key_env,
            base_url_env=self.base_url_env,
            headers=dict(self.headers),
            extra_body=dict(self.extra_body),
            tool_choice=self.tool_choice,
            tool_call_prefix=self.tool_call_prefix,
            local=local,
        )


class PermissionsConfig(Section):
    """A profile's `permissions`: the mode, and rules such as `Bash(git push:*)`.

    The rules are read (and a bad one refused, naming it) when a session starts,
    together with the project's `.caretz/settings.json`: see docs/security.md.
    """

    mode: PermissionMode = DEFAULT_MODE
    allow: list[str] = Field(default_factory=list)
    ask: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)

    def rule_lists(self) -> dict[str, list[str]]:
        return {"allow": self.allow, "ask": self.ask, "deny": self.deny}


class CheckpointsConfig(Section):
    """`checkpoints`: snapshots of the project before each turn's first change."""

    enabled: bool = True
    max_file_size: PositiveSize = "5MB"  # larger files are left out of snapshots

    @property
    def max_file_size_bytes(self) -> int:
        return parse_size(self.max_file_size)


class StatusLineConfig(Section):
    """`statusLine`: a command of the user's whose first line of output the interactive
    session shows in its bottom toolbar; it gets the session as JSON on stdin, in Claude
    Code's shape (docs/interactive.md). `type` and `padding` are Claude Code's keys, taken
    so its settings carry over; the toolbar has no padding."""

    type: Literal["command"] = "command"
    command: str = Field(min_length=1)
    padding: int = Field(0, ge=0)
    timeout: PositiveDuration = "5s"  # longer: the line shows nothing until it answers

    @property
    def timeout_s(self) -> float:
        return parse_duration(self.timeout)


class TelemetryConfig(Section):
    """`telemetry`: OpenTelemetry export (docs/telemetry.md), off unless `enabled` (or
    CARETZ_ENABLE_TELEMETRY=1); where it goes is the standard OTEL_* variables' to say.
    Read from the user's profile only, never from a project's files."""

    enabled: bool = False
    log_user_prompts: bool = (
        False  # the prompt's text on the turn's span (or OTEL_LOG_USER_PROMPTS=1)
    )
    log_tool_details: bool = (
        False  # a call's arguments, the guard's headlines (OTEL_LOG_TOOL_DETAILS=1)
    )


class Profile(Section):
    model: ModelRef = DEFAULT_MODEL
    base_url: BaseUrl | None = None
    # None: from the model (caretz/providers/model_limits.py, docs/configuration.md).
    reasoning: Reasoning | None = None
    max_tokens: int | None = Field(None, ge=1)
    max_tool_calls: ToolCallLimit | None = None  # None: no limit
    max_budget_usd: BudgetUsd | None = None  # None: no limit
    bash_timeout: PositiveDuration = "120s"
    # No answer this long after a request went out: that attempt is given up (retried once).
    first_byte_timeout: PositiveDuration = "50s"
    # A model's stream that sends nothing (no byte, no keep-alive) this long: given up the same way.
    stream_idle_timeout: PositiveDuration = "50s"
    max_retries: int = Field(4, ge=0, le=10)  # of a failed model request, with backoff
    output: Output = "text"
    system_prompt: str | None = None  # appended to caretz's own system prompt
    tool_choice: ToolChoice | None = None  # replaces the provider's toolChoice
    context_window: int | None = Field(None, ge=1000)  # tokens; None: from the model
    loop_guard: LoopGuardConfig = Field(default_factory=LoopGuardConfig)
    permissions: PermissionsConfig = Field(default_factory=PermissionsConfig)
    checkpoints: CheckpointsConfig = Field(default_factory=CheckpointsConfig)
    goal: GoalConfig = Field(default_factory=GoalConfig)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    hooks: HooksConfig = Field(default_factory=HooksConfig)  # docs/hooks.md
    shell_env: list[str] = Field(
        default_factory=list
    )  # variables a command gets despite the filter
    mcp_servers: ServerTable = Field(default_factory=dict)  # as in .mcp.json (docs/mcp.md)
    mcp: McpConfig = Field(default_factory=McpConfig)
    web_fetch: WebFetchConfig = Field(default_factory=WebFetchConfig)  # docs/web.md
    web_search: WebSearchConfig = Field(default_factory=WebSearchConfig)
    status_line: StatusLineConfig | None = None  # docs/interactive.md
    telemetry: TelemetryConfig = Field(default_factory=TelemetryConfig)  # docs/telemetry.md

    @property
    def bash_timeout_s(self) -> float:
        return parse_duration(self.bash_timeout)

    @property
    def stream_idle_timeout_s(self) -> float:
        return parse_duration(self.stream_idle_timeout)

    @property
    def first_byte_timeout_s(self) -> float:
        return parse_duration(self.first_byte_timeout)


class PriceEntry(Section):
    """An entry of `prices`: USD per million tokens (`pricing.Price` once read)."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: float | None = Field(None, ge=0)
    cache_write: float | None = Field(None, ge=0)

    def price(self) -> Price:
        return Price(self.input, self.output, self.cache_read, self.cache_write)


class ConfigFile(Section):
    profiles: dict[str, Profile] = Field(default_factory=dict)
    providers: dict[str, ProviderConfig] = Field(default_factory=dict)
    prices: dict[str, PriceEntry] = Field(default_factory=dict)

    @field_validator("providers")
    @classmethod
    def _names_without_slash(cls, value: dict[str, ProviderConfig]) -> dict[str, ProviderConfig]:
        for name in value:
            if not name or "/" in name:
                raise ValueError(f"provider name {name!r} must be non-empty and have no '/'")
        return value

    def price_table(self) -> dict[str, Price]:
        return {glob: entry.price() for glob, entry in self.prices.items()}

    def provider_entries(self, config_dir: Path | None = None) -> dict[str, ProviderEntry]:
        """The file's providers as entries; relative local model paths are from `config_dir`."""
        return {name: config.to_entry(name, config_dir) for name, config in self.providers.items()}
