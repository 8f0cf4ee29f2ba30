"""The programs a session's start waits for, started as soon as the settings are known.

Opening a session runs two programs whose answers its first request needs: bubblewrap
(`bwrap … true`: does the sandbox work here) and `git status` (the branch and changed
files the system prompt names). Each is milliseconds of waiting on another process, so
`StartProbes` runs both in threads while the session's modules load and its parts are
built, and the session takes their answers where it needs them. The answers are those it
would have found itself: the same policy, the same trusted programs, the same commands.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from caretz.config.settings import Settings
    from caretz.sandbox.detect import SandboxCheck

T = TypeVar("T")


class Background(Generic[T]):
    """`work()` in a daemon thread; `result()` waits for it and raises what it raised."""

    def __init__(self, work: Callable[[], T], name: str):
        self._work = work
        self._value: T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._work()
        except BaseException as error:  # raised again in the thread that asks
            self._error = error

    def result(self) -> T:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


class StartProbes:
    """The sandbox check and the git status of a session starting in `workspace`."""

    def __init__(self, settings: Settings, workspace: Path, env: Mapping[str, str]):
        self._git: Background[list[str]] | None = None
        self._sandbox = Background(
            lambda: self._check(settings, workspace, env), "caretz-sandbox-probe"
        )

    def _check(self, settings: Settings, workspace: Path, env: Mapping[str, str]) -> SandboxCheck:
        from caretz.config.sandbox import sandbox_policy, session_programs
        from caretz.sandbox.detect import check_sandbox

        policy = sandbox_policy(settings, workspace, env)
        programs = session_programs(policy, env)
        git = programs.git.path
        if git is not None:
            self._git = Background(lambda: _git_status(workspace, git), "caretz-git-status")
        return check_sandbox(policy.mode, policy.network, programs=programs)

    def sandbox_check(self) -> SandboxCheck:
        """What `check_sandbox` found for the session's policy and programs; raises what
        working out the policy raised (a ConfigError naming the setting)."""
        return self._sandbox.result()

    def git_status(self) -> list[str] | None:
        """The system prompt's git lines (None: there is no trusted git to ask)."""
        self._sandbox.result()  # the trusted git is known once the check has begun
        return self._git.result() if self._git is not None else None


def _git_status(workspace: Path, git: str) -> list[str]:
    from caretz.agent.prompts import git_lines

    return git_lines(workspace, git)
