"""The session's environment as the system prompt tells it (agent/prompts.py's
`SessionEnvironment`): the sandbox that is really open, the permission mode, and whether
anybody can answer a question."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from caretz.agent.prompts import SessionEnvironment
from caretz.sandbox import landlock as sandbox_landlock
from caretz.sandbox.policy import guarded_roots
from caretz.tools.asking import NobodyAsks

if TYPE_CHECKING:
    from caretz.config.settings import Settings
    from caretz.runtime.web import WebSetup
    from caretz.sandbox.runner import Sandbox
    from caretz.tools.permission import SessionPermissions


def session_environment(
    settings: Settings,
    sandbox: Sandbox | None,
    permissions: SessionPermissions,
    git_status: Sequence[str] | None = None,
    web: WebSetup | None = None,
) -> SessionEnvironment:
    """`git_status`: the git lines already asked for (runtime/probes.py)."""
    enforced = sandbox is not None and sandbox.enforced
    allowlist = sandbox.policy.allowlist if sandbox is not None and enforced else None
    return SessionEnvironment(
        permission_mode=settings.permission_mode,
        backend=sandbox.backend.value if sandbox is not None and enforced else "none",
        network=bool(sandbox and sandbox.policy.network),
        # A root on a read-only mount is told as it is: nothing there can be written.
        writable=guarded_roots(sandbox.policy) if sandbox is not None else (),
        headless=isinstance(permissions.asker, NobodyAsks),
        git=sandbox.git_path if sandbox is not None else None,
        git_status=git_status,
        web_fetch=web is not None and web.fetch,
        web_search=web.search_by if web is not None else None,
        allowed_hosts=tuple(allowlist.entries) if allowlist is not None else None,
        landlock_tcp=_landlock_limits_tcp(sandbox) if allowlist is not None else True,
    )


def _landlock_limits_tcp(sandbox: Sandbox | None) -> bool:
    """Under Landlock, whether the kernel can hold TCP to the proxy's port (ABI 4)."""
    if sandbox is None or sandbox.backend.value != "landlock":
        return True
    return sandbox_landlock.abi_version() >= 4
