"""Wiring the network allowlist into a session: its events go to the session log, and in an
interactive session a host the proxy refused can be allowed for the rest of the session.

The question comes after the command that was refused has ended, in the turn's thread,
through the same asker as the permission questions (never from the proxy's threads while
a command waits): the model is told what the user allowed and runs the command again.
Only hosts refused for not being listed are offered; one that resolves to a private
address is not, nor is a private address.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from caretz.tools.asking import Asker, Question

if TYPE_CHECKING:
    from caretz.sandbox.runner import Sandbox


def wire_network(sandbox: Sandbox, emit: Callable[..., object], asker: Asker) -> None:
    """Give the session's network checks (made when a command first needs them, also
    after a switch to a profile with an allowlist) the log's `emit` and, when someone can
    answer, the question that allows a refused host for the session."""
    sandbox.runtime.wire_network(emit, ask_to_allow(asker) if asker.interactive else None)


def ask_to_allow(asker: Asker) -> Callable[[Sequence[str]], list[str]]:
    def ask(hosts: Sequence[str]) -> list[str]:
        return [host for host in hosts if asker(host_question(host)).choice != "no"]

    return ask


def host_question(host: str) -> Question:
    return Question(
        tool="bash",
        arguments={"host": host},
        summary=host,
        reason=(
            "a command was refused a connection to it: it is not in sandbox.network. "
            "Allowed, later commands reach it through caretz's proxy until the session ends"
        ),
        heading=f"caretz asks: let commands reach {host} for the rest of this session?",
        yes_means="yes, for this session (add it to sandbox.network in profiles.json to keep it)",
    )
