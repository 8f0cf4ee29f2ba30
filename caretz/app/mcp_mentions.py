"""MCP resources and prompts in what the user sends: each `@server:scheme://path` in a
prompt read from its server and attached after the message, and `/mcp__server__prompt
ARGS` expanded through the server's prompt into the message.

Both run in `AppSession.turn` and `AppSession.submit`, which every front end's prompt passes
(the REPL, `-p`, stream-json, ACP, the Python API). A mention answers to the permission
rules as the model's `read_mcp_resource` call would: a deny rule on the tool or on
`mcp__server` refuses it. A mention that cannot be attached stays text and one line says
why (as a refused `@path` does: the message still goes, and the model may read the
resource itself); a prompt command that cannot be had is a ConfigError of one line, and
nothing is sent. A resource is cut to the session's result cap like a tool result
(tools/result_cap.py), the whole kept in a file the text names.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from caretz.agent.outcomes import Outcome
from caretz.app.outcome import usage_outcome
from caretz.config_base import ConfigError
from caretz.mcp_client.model import RemotePrompt
from caretz.mcp_client.resource_tools import READ, rule_name
from caretz.mcp_client.resources import ResourceProblem
from caretz.messages import Image
from caretz.session.records.mcp import (
    McpPromptExpanded,
    McpResourceAttached,
    McpResourceNotAttached,
)
from caretz.slash_commands.inline import ResourceMention, resource_mentions
from caretz.tools.base import ToolContext, ToolResult
from caretz.tools.result_cap import fit

if TYPE_CHECKING:
    from caretz.app.session import AppSession
    from caretz.mcp_client.servers import McpServers

NOT_SENT = "(nothing was sent)"


def attach_resources(
    session: AppSession, prompt: str, typed: str | None
) -> tuple[str, list[Image]]:
    """`prompt` with the resources `typed`'s (None: the prompt's) mentions name after it,
    and their images. One that cannot be attached is left as text, and a
    `Mcp.ResourceNotAttached` event (one line) says why."""
    mcp, ctx, emit = session.mcp, session.agent.parts.tool_ctx, session.log.emit
    blocks: list[str] = []
    images: list[Image] = []
    for mention in resource_mentions(prompt if typed is None else typed):
        server, uri = mention.server, mention.uri
        try:
            text, found = _read(mcp, mention, ctx)
        except ResourceProblem as problem:
            emit(McpResourceNotAttached(server=server, uri=uri, reason=str(problem)))
            continue
        if found and ctx.no_images is not None:
            text, found = f"{text}\n[the images were not sent: {ctx.no_images}]", []
        text = fit(ToolResult(ok=True, output=text), ctx.output_limit_chars).output
        quoted = uri.replace('"', "%22")
        blocks.append(f'<resource server="{server}" uri="{quoted}">\n{text}\n</resource>')
        images += found
        emit(McpResourceAttached(server=server, uri=uri, chars=len(text), images=len(found)))
    return "\n\n".join([prompt.rstrip(), *blocks]) if blocks else prompt, images


def _read(
    mcp: McpServers | None, mention: ResourceMention, ctx: ToolContext
) -> tuple[str, list[Image]]:
    """The resource's text and images; raises ResourceProblem (one line)."""
    if mcp is None:
        raise ResourceProblem("no MCP servers are configured")
    _refuse_by_rule(ctx, mention)
    return mcp.resources.read(mention.server, mention.uri, ctx.cancel)


def _refuse_by_rule(ctx: ToolContext, mention: ResourceMention) -> None:
    if ctx.rules is None:
        return
    for name in (READ, *rule_name(READ, {"server": mention.server})):
        decision = ctx.rules.check(name, {}, ctx.workspace)
        if decision.outcome == "deny":
            raise ResourceProblem(decision.reason)


def run_prompt_command(session: AppSession, command: str) -> Outcome:
    """`/mcp__server__prompt ARGS`: the turn on what the server's prompt says."""
    ctx = session.agent.parts.tool_ctx
    try:
        prompt, images = expand_prompt(session.mcp, command, ctx, session.log.emit)
    except ConfigError as error:
        return usage_outcome(str(error))
    return session.turn(prompt, images, typed="")  # the server's text mentions nothing


def expand_prompt(
    mcp: McpServers | None, text: str, ctx: ToolContext, emit: Callable[[Any], Any]
) -> tuple[str, list[Image]]:
    """`/mcp__server__prompt ARGS` as the message its server's prompt makes; raises
    ConfigError (one line) for an unknown prompt or a missing required argument."""
    command, _, rest = text.strip()[1:].partition(" ")
    if mcp is None:
        raise ConfigError(f"no MCP prompt /{command}: no MCP servers are configured {NOT_SENT}")
    try:
        server, prompt = mcp.prompt_named(command, ctx.cancel)
        arguments = prompt_arguments(prompt, rest, command)
        expanded, images = mcp.resources.prompt(server, prompt, arguments, ctx.cancel)
    except ResourceProblem as problem:
        raise ConfigError(f"/{command}: {problem} {NOT_SENT}") from None
    emit(
        McpPromptExpanded(
            server=server, prompt=prompt.name, arguments=arguments, chars=len(expanded)
        )
    )
    return expanded, images


def prompt_arguments(prompt: RemotePrompt, typed: str, command: str) -> dict[str, str]:
    """The words typed after the command, given to the prompt's arguments in the order it
    declares them (quotes keep words together; the last argument takes any words left
    over); raises ResourceProblem naming a required argument left out."""
    try:
        words = shlex.split(typed)
    except ValueError:  # an unclosed quote: the words as typed
        words = typed.split()
    declared = prompt.arguments
    if declared and len(words) > len(declared):
        words = [*words[: len(declared) - 1], " ".join(words[len(declared) - 1 :])]
    given = {argument.name: word for argument, word in zip(declared, words, strict=False)}
    for argument in declared:
        if argument.required and argument.name not in given:
            raise ResourceProblem(
                f"missing its required argument {argument.name!r} ({usage(command, prompt)})"
            )
    return given


def usage(command: str, prompt: RemotePrompt) -> str:
    """`/mcp__db__review <pr> [style]`: required arguments in <>, the others in []."""
    shown = [f"<{a.name}>" if a.required else f"[{a.name}]" for a in prompt.arguments]
    return " ".join([f"/{command}", *shown])
