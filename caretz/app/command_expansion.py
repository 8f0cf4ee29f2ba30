"""A custom command's `!`command`` lines run and its `@path` files read, before its
prompt is sent, as tool calls through the session's tool registry.

Each `!`…`` is a bash call and each `@path` that names an existing file a read call,
so everything that guards the model's calls guards these: the permission mode and
rules (with the command's `allowed-tools` as allow rules, the `TurnGrant` each call's
context carries), PreToolUse and PostToolUse hooks, the sandbox and its path checks,
the timeout and the output caps. A command's output (with `[exit code N]` when it
fails) takes the place of its `!`…``; each file's contents, numbered as the read tool
shows them, follow the prompt in a `<file path="…">` block (an image file's is the line
describing it, and the image goes with the prompt).

A call that is refused (a rule, a hook, nobody to ask in a headless run, the user's
no) or a file that cannot be read stops the whole command: `CommandRefused`, one line
naming the command file, and nothing is sent. Every call is a `Command.Ran` event.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from caretz.config_base import ConfigError
from caretz.lazy import lazy_module
from caretz.messages import Image, ToolCall
from caretz.permissions.rules import RuleError
from caretz.session.records.session import CommandRan
from caretz.slash_commands.inline import (
    FileMention,
    file_mentions,
    replace_spans,
    shell_spans,
    with_files,
)
from caretz.text import one_line
from caretz.tools.base import ToolInterrupted, ToolResult
from caretz.tools.policy import EndTurn, TurnGrant

if TYPE_CHECKING:
    from caretz.permissions import proposals as rule_proposals
else:
    rule_proposals = lazy_module("caretz.permissions.proposals")  # only for a refused call's hint

if TYPE_CHECKING:
    from caretz.app.session import AppSession
    from caretz.runtime.custom_commands import PreparedCommand
    from caretz.tools.base import ToolContext

REASON_CHARS = 300
# A command file's `!` commands run unasked only where an allow rule (its `allowed-tools`,
# or the user's) allows them, even in `auto` mode, and ask (or, headless, are refused)
# otherwise: a command file may come with a cloned repository, and Claude Code too runs
# only the `!` commands its allowed-tools permit.
RULE_NEEDED = "a command file's ! commands run unasked only where a rule allows them"


class CommandRefused(ConfigError):
    """A `!` command or `@` file of a custom command that did not run; one line."""


def expand_inline(session: AppSession, prepared: PreparedCommand) -> tuple[str, list[Image]]:
    """The command's prompt with its `!` commands' outputs and its `@` files in it, and
    the images among those files (the read tool's, attached to the prompt); raises
    CommandRefused when one is refused (what ran before it stays run)."""
    prompt = prepared.prompt
    spans = shell_spans(prompt)
    mentions = file_mentions(prompt)
    if not spans and not mentions:
        return prompt, []
    calls = _Calls(session=session, prepared=prepared)
    outputs = [calls.shell(span.command) for span in spans]
    files = [calls.read(path) for path in existing_files(mentions, session.workspace)]
    return with_files(replace_spans(prompt, spans, outputs), files), calls.images


def existing_files(mentions: list[FileMention], workspace: Path) -> list[str]:
    """The mentions that name an existing file (relative to `workspace`), as written;
    the others (an address, a decorator, a missing file) stay text."""
    found: list[str] = []
    for mention in mentions:
        named = next((c for c in mention.candidates if _is_file(c, workspace)), None)
        if named is not None:
            found.append(named)
    return list(dict.fromkeys(found))


def _is_file(candidate: str, workspace: Path) -> bool:
    path = Path(os.path.expanduser(candidate))
    try:
        return (path if path.is_absolute() else workspace / path).is_file()
    except (OSError, ValueError):  # a name too long, a NUL: no file of that name
        return False


@dataclass(kw_only=True)
class _Calls:
    session: AppSession
    prepared: PreparedCommand
    prefix: str = field(default_factory=lambda: f"command-{uuid.uuid4().hex[:8]}")
    numbers: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    images: list[Image] = field(default_factory=list)  # the images its @ files are

    def shell(self, command: str) -> str:
        shown = f"!`{command}`"
        result, reached, denial = self.run("bash", {"command": command}, shown)
        if not reached:
            raise self.refusal(shown, result, denial, {"command": command})
        return result.output

    def read(self, path: str) -> tuple[str, str]:
        shown = f"@{path}"
        result, reached, denial = self.run("read", {"path": path}, shown, fail_closed=True)
        if not reached:
            raise self.refusal(shown, result, denial, {"path": path})
        if not result.ok:  # the sandbox's path check, a binary or missing file
            text = _one_line(result.output)
            raise CommandRefused(
                f"{self.prepared.command.path}: {shown} cannot be included: {text} "
                "(nothing was sent)"
            )
        self.images += result.images
        return path, result.output

    def run(
        self, tool: str, arguments: dict[str, Any], shown: str, fail_closed: bool = False
    ) -> tuple[ToolResult, bool, str | None]:
        """The call's result, whether every check let it through, and the reason the
        permission check gave for refusing it (None: it did not refuse). `fail_closed`:
        a failed result stops the command too, and is logged as refused."""
        session = self.session
        call = ToolCall(id=f"{self.prefix}-{next(self.numbers)}", name=tool, arguments=arguments)
        reached: list[bool] = []

        def let_through(call: ToolCall, ctx: ToolContext) -> None:
            reached.append(True)  # the last check: everything before it let the call run

        permissions = session.permissions
        denials = len(permissions.denials) if permissions is not None else 0
        parts = session.agent.parts
        needed = RULE_NEEDED if tool == "bash" else None
        ctx = dataclasses.replace(parts.tool_ctx, grant=TurnGrant(self.prepared.rules, needed))
        try:
            result = parts.tools.run(call, ctx, before_call=(let_through,))
        except EndTurn as end:  # a hook's `continue: false`
            result = end.result or ToolResult(ok=False, output=end.reason)
            self.record(call, shown, result, refused=end.reason)
            raise CommandRefused(
                f"{self.prepared.command.path}: {shown}: {_one_line(end.reason)} (nothing was sent)"
            ) from None
        except KeyboardInterrupt as stop:  # what it did until Ctrl-C, then stop
            partial = (
                stop.result
                if isinstance(stop, ToolInterrupted)
                else ToolResult(ok=False, output="")
            )
            self.record(call, shown, partial, refused="interrupted")
            raise
        denial = None
        if permissions is not None and len(permissions.denials) > denials:
            denial = permissions.denials[-1]["reason"]
        stops = not reached or (fail_closed and not result.ok)
        refused = (denial or _one_line(result.output)) if stops else None
        self.record(call, shown, result, refused)
        return result, bool(reached), denial

    def record(self, call: ToolCall, shown: str, result: ToolResult, refused: str | None) -> None:
        self.session.log.emit(
            CommandRan(
                command=f"/{self.prepared.command.name}",
                file=os.fspath(self.prepared.command.path),
                call_id=call.id,
                tool=call.name,
                input=shown,
                refused=refused,
                **result.to_dict(),
            )
        )

    def refusal(
        self, shown: str, result: ToolResult, denial: str | None, arguments: dict[str, Any]
    ) -> CommandRefused:
        reason = _one_line(denial or result.output)
        hint = self.hint(denial, arguments) if denial is not None else ""
        return CommandRefused(
            f"{self.prepared.command.path}: {shown} was refused: {reason}{hint} (nothing was sent)"
        )

    def hint(self, denial: str, arguments: dict[str, Any]) -> str:
        if "deny rule" in denial:
            return "; a deny rule wins over the command's allowed-tools"
        rules = self.rules_to_allow(arguments)
        return f"; to let the command run it, add {rules} to its allowed-tools"

    def rules_to_allow(self, arguments: dict[str, Any]) -> str:
        permissions = self.session.permissions
        tool = "bash" if "command" in arguments else "read"
        fallback = f"Bash({arguments['command']})" if tool == "bash" else "Read"
        if permissions is None:
            return fallback
        try:
            proposal = rule_proposals.propose_rules(
                tool, arguments, self.session.workspace, permissions.rules
            )
        except RuleError:
            return fallback
        return ", ".join(proposal.rules) or fallback


def _one_line(text: str) -> str:
    """A reason as one line; the path check's own "refused: " is said once already."""
    return one_line(text, REASON_CHARS).removeprefix("refused: ")
