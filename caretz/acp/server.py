"""`caretz acp`: caretz as an Agent Client Protocol agent on stdin and stdout.

The settings are resolved first (a problem is one line on stderr and exit 2, before any
protocol is spoken). Then stdout belongs to the protocol alone: caretz keeps private
copies of the protocol's pipes and points file descriptors 0 and 1 elsewhere (stdin at
/dev/null, stdout at stderr), so nothing a hook, a server or a stray print writes can
corrupt a message. Logs go to stderr, which editors show as the agent's log.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from caretz.agent.signals import is_ignored
from caretz.config.env_file import apply_env_file
from caretz.config.loading import load_config_file
from caretz.config.settings import resolve_settings
from caretz.config_base import ConfigError
from caretz.lazy import lazy_module
from caretz.usage_error import fail

if TYPE_CHECKING:
    import acp as acp_sdk

    from caretz.acp import agent as acp_agent
else:
    # The ACP SDK and the agent on it: loaded once the settings are good, so a bad flag is one
    # line before any of it.
    acp_agent = lazy_module("caretz.acp.agent")
    acp_sdk = lazy_module("acp")

log = logging.getLogger("caretz.acp")
STREAM_LIMIT = 50 * 1024 * 1024  # of one message: the SDK's default, for attached files


def run_acp(flags: Mapping[str, Any], env_file: Path | None = None) -> int:
    """Serve one editor until it closes the connection; the exit code."""
    try:
        if env_file is not None:
            apply_env_file(env_file, os.environ)
        settings = resolve_settings(flags, os.environ)
        models = profile_models(settings.config_path)
    except ConfigError as error:
        return fail(str(error))
    logging.basicConfig(level=logging.WARNING, format="caretz acp: %(message)s")
    reader, writer = protocol_pipes()
    agent = acp_agent.AcpAgent(settings, os.environ, models)
    asyncio.run(serve(agent, reader, writer))
    return 0


async def serve(agent: Any, reader: IO[bytes], writer: IO[bytes]) -> None:
    """Speak ACP on the two pipes until the editor closes them (or SIGTERM / SIGHUP),
    then close every session."""
    loop = asyncio.get_running_loop()
    incoming, outgoing = await streams(loop, reader, writer)
    listening = asyncio.ensure_future(acp_sdk.run_agent(agent, outgoing, incoming))
    for ending in (signal.SIGTERM, signal.SIGHUP):
        if not is_ignored(ending):  # inherited as ignored (nohup): it stays so
            loop.add_signal_handler(ending, listening.cancel)
    try:
        with contextlib.suppress(asyncio.CancelledError):
            await listening
    finally:
        await agent.close()


async def streams(
    loop: asyncio.AbstractEventLoop, reader: IO[bytes], writer: IO[bytes]
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    incoming = asyncio.StreamReader(limit=STREAM_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(incoming), reader)
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), writer
    )
    return incoming, asyncio.StreamWriter(transport, protocol, None, loop)


def protocol_pipes() -> tuple[IO[bytes], IO[bytes]]:
    """Private copies of stdin and stdout for the protocol; fd 0 becomes /dev/null and
    fd 1 a copy of stderr, for everything else in this process and its children."""
    reader = os.fdopen(os.dup(0), "rb", buffering=0)
    writer = os.fdopen(os.dup(1), "wb", buffering=0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return reader, writer


def profile_models(config_path: Path) -> list[str]:
    """The models profiles.json names, for the editor's model picker."""
    file = load_config_file(config_path)
    return [profile.model for profile in file.profiles.values()]
