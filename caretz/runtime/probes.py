"""What a session's start waits for, started as soon as it can be.

Opening a session runs two programs whose answers its first request needs: bubblewrap
(`bwrap … true`: does the sandbox work here) and `git status` (the branch and changed
files the system prompt names); and a model served on this machine is asked for its
context window (llama.cpp's `/props`). Each is milliseconds of waiting on another
process, so `StartProbes` runs them in threads while the session's modules load and its
parts are built, and the session takes their answers where it needs them. The answers
are those it would have found itself: the same policy, the same trusted programs, the
same commands, the same provider.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

# What the probes need is imported with this module, in the caller's thread: the threads
# only run the programs (see StartProbes).
from caretz.agent.prompts import git_lines
from caretz.config.sandbox import sandbox_policy, session_programs
from caretz.config_base import ConfigError
from caretz.lazy import lazy_module
from caretz.sandbox.detect import SandboxCheck, check_sandbox

if TYPE_CHECKING:
    from caretz.runtime import models as runtime_models
else:
    # The providers' modules: loaded with the session's parts, once the probes run.
    runtime_models = lazy_module("caretz.runtime.models")

if TYPE_CHECKING:
    from caretz.config.settings import Settings
    from caretz.providers.base import Provider

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
        return self._value  # type: ignore[return-value]  # set: the work returned


class StartProbes:
    """The sandbox check and the git status of a session starting in `workspace`.

    The policy and the trusted programs are worked out at once, in the caller's thread
    (it would import the same modules a moment later); the threads only run the two
    programs and read their answers, so they need the interpreter for a moment each.
    """

    def __init__(self, settings: Settings, workspace: Path, env: Mapping[str, str]):
        self._git: Background[list[str]] | None = None
        try:
            policy = sandbox_policy(settings, workspace, env)
        except ConfigError as error:  # raised where the session asks for the sandbox
            self._sandbox: Background[SandboxCheck] = Background(_raise(error), "caretz-probe")
            return
        programs = session_programs(policy, env)
        self._sandbox = Background(
            lambda: check_sandbox(policy.mode, policy.network, programs=programs),
            "caretz-sandbox-probe",
        )
        git = programs.git.path
        if git is not None:
            self._git = Background(lambda: git_lines(workspace, git), "caretz-git-status")

    def sandbox_check(self) -> SandboxCheck:
        """What `check_sandbox` found for the session's policy and programs; raises what
        working out the policy raised (a ConfigError naming the setting)."""
        return self._sandbox.result()

    def git_status(self) -> list[str] | None:
        """The system prompt's git lines (None: there is no trusted git to ask)."""
        return self._git.result() if self._git is not None else None

    def ask_served_window(self, provider: Provider) -> Callable[[], int | None]:
        """Start asking `provider`'s server for its context window; the call waits for the
        answer (None: not a server on this machine, or it does not say)."""
        served_window = runtime_models.served_context_window  # read here, not in the thread
        asked = Background(lambda: served_window(provider), "caretz-context-window")
        return asked.result


def _raise(error: BaseException) -> Callable[[], SandboxCheck]:
    def fail() -> SandboxCheck:
        raise error

    return fail
