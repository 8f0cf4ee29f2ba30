"""The ACP agent: the protocol's requests, each handed to the editor session it names.

Settings are resolved once, when `caretz acp` starts (the profile, the root flags and the
`CARETZ_*` variables, as for any run); each `session/new` opens a caretz session in the
folder the editor gives. A setting caretz refuses is one line in the request's error,
and nothing is started.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    ClientCapabilities,
    ConfigOptionUpdate,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionListCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from caretz import __version__
from caretz.acp import options
from caretz.acp.auth import auth_methods, missing_key
from caretz.acp.listing import session_list
from caretz.acp.mcp import editor_servers
from caretz.acp.options import Choices
from caretz.acp.prompt import prompt_text
from caretz.acp.sessions import AcpSession
from caretz.config.settings import Settings
from caretz.config_base import ConfigError
from caretz.session.store import SessionNotFound


class AcpAgent:
    def __init__(self, settings: Settings, env: Mapping[str, str], profile_models: list[str]):
        self.settings = settings
        self.env = env
        self.profile_models = profile_models
        self.client: Any = None
        self.capabilities = ClientCapabilities()
        self.sessions: dict[str, AcpSession] = {}

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        self.capabilities = client_capabilities or ClientCapabilities()
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=True),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            ),
            auth_methods=auth_methods(self.settings, self.env),
            agent_info=Implementation(name="caretz", title="caretz", version=__version__),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse:
        self._check_key()
        return AuthenticateResponse()

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        session = await self._open(cwd, None, mcp_servers)
        choices = self._choices(session)
        return NewSessionResponse(
            session_id=session.id,
            modes=options.modes(choices),
            config_options=options.config_options(choices),
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        session = await self._open(cwd, session_id, mcp_servers)
        await session.replay()
        choices = self._choices(session)
        return LoadSessionResponse(
            modes=options.modes(choices), config_options=options.config_options(choices)
        )

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        return await asyncio.to_thread(session_list, self.settings.data_dir, cwd)

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        reads = self.capabilities.fs is not None and self.capabilities.fs.read_text_file
        text = await prompt_text(
            prompt, session.workspace, self._reader(session_id) if reads else None
        )
        stop, usage = await session.prompt(text)
        return PromptResponse(stop_reason=stop, usage=usage)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancel()

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        await self._switch(session_id, options.PERMISSION_MODE, mode_id)
        choices = self._choices(self._session(session_id))
        update = ConfigOptionUpdate(
            session_update="config_option_update", config_options=options.config_options(choices)
        )
        await self.client.session_update(session_id=session_id, update=update)
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        await self._switch(session_id, config_id, str(value))
        choices = self._choices(self._session(session_id))
        return SetSessionConfigOptionResponse(config_options=options.config_options(choices))

    async def close(self) -> None:
        """The connection ended: close every session (SessionEnd hooks, jobs, servers)."""
        for session in list(self.sessions.values()):
            await session.close()
        self.sessions.clear()

    # -----------------------------------------------------------------------------------
    async def _open(self, cwd: str, resume: str | None, servers: list[Any] | None) -> AcpSession:
        self._check_key()
        workspace = Path(cwd)
        if not workspace.is_absolute() or not workspace.is_dir():
            raise refused(f"cwd {cwd!r}: not an absolute path to a folder")
        if resume is not None and resume in self.sessions:  # loaded again: one writer per log
            await self.sessions.pop(resume).close()
        session = AcpSession(asyncio.get_running_loop(), self.client, workspace)
        try:
            extra = editor_servers(servers, self.settings.profile.mcp_servers)
            await session.open(self.settings, self.env, resume=resume, mcp_servers=extra)
        except (ConfigError, SessionNotFound) as error:
            raise refused(str(error)) from None
        self.sessions[session.id] = session
        return session

    async def _switch(self, session_id: str, option: str, value: str) -> None:
        session = self._session(session_id)
        try:
            change = options.switch_arguments(option, value)
        except KeyError:
            raise refused(
                f"no config option {option!r}: caretz has model, mode and loop_guard"
            ) from None
        try:
            await session.switch(**change)
        except ConfigError as error:
            raise refused(str(error)) from None
        # A permission mode's switch reaches the editor as the session's own event says
        # it (acp/translate.py), as an approved plan's does.

    def _choices(self, session: AcpSession) -> Choices:
        """The session's model and modes as they are now (a switch changes its settings)."""
        settings = session.live.settings
        return Choices(
            model=settings.model.ref,
            permission_mode=settings.permission_mode,
            guard_mode=settings.loop_guard.mode,
            models=options.model_choices(settings.model.ref, self.profile_models),
        )

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise refused(f"no open session {session_id!r}: create or load it first")
        return session

    def _check_key(self) -> None:
        problem = missing_key(self.settings, self.env)
        if problem is not None:
            raise RequestError(AUTH_REQUIRED, problem)

    def _reader(self, session_id: str) -> Any:
        async def read(path: str) -> str | None:
            try:
                response = await self.client.read_text_file(session_id=session_id, path=path)
            except Exception:  # not open in the editor, or it cannot read it: the model reads it
                return None
            text: str | None = response.content
            return text

        return read


INVALID_PARAMS = -32602
AUTH_REQUIRED = -32000


def refused(line: str) -> RequestError:
    """A request caretz cannot carry out, with the one line that says why as its message."""
    return RequestError(INVALID_PARAMS, line)
