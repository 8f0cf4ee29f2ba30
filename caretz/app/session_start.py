"""A session's start, once it is built (app/assembly.py): its first record in the log, then
what follows it: checkpoints that are off say so, the MCP servers report, the hooks follow
the log and SessionStart runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from caretz import __version__
from caretz.config.sandbox import sandbox_fields
from caretz.runtime.project_trust import ProjectTrust, part_digests, whole_digest
from caretz.runtime.trust_notice import not_approved_notice
from caretz.session.records.session import SessionResumed, SessionStarted

if TYPE_CHECKING:
    from caretz.app.assembly import Carried, Checked, Place, SessionParts
    from caretz.hooks.session import SessionHooks


def start(parts: SessionParts, checked: Checked, carried: Carried | None) -> None:
    """The session's start in its log, then what follows it: checkpoints that are off
    say so, the MCP servers report, the hooks follow the log and SessionStart runs."""
    place, tools = checked.place, parts.tools
    trust = None if carried is not None else trust_record(checked.trust)
    write_start(parts, place, trust, checked.notices)
    if tools.checkpoints is not None:
        tools.checkpoints.announce()
    if parts.mcp is not None and (carried is None or carried.mcp is None):
        parts.mcp.report()  # servers carried over reported when they started
    if parts.mcp is not None and carried is not None:
        parts.mcp.report_to(parts.log.emit)
    if tools.hooks is not None:
        start_hooks(tools.hooks, parts, place.resumed, carried is not None)


def trust_record(trust: ProjectTrust) -> dict[str, Any] | None:
    """What the start records of the project's configuration (None: it brings none): its
    digest, whether approved, and the one line saying what is left out and how to approve."""
    parts = part_digests(trust.config)
    if not parts:
        return None
    found: dict[str, Any] = {"approved": trust.approved, "digest": whole_digest(parts)}
    ignored = trust.ignored()
    if ignored:
        found["ignored"] = ignored
        found["notice"] = not_approved_notice(trust)
    return found


def write_start(
    parts: SessionParts,
    place: Place,
    trust: dict[str, Any] | None = None,
    notices: tuple[str, ...] = (),
) -> None:
    settings, tools, log = parts.settings, parts.tools, parts.log
    assert tools.sandbox is not None  # every session opens one, if only to say it is off
    opened = SessionResumed if place.resumed else SessionStarted
    log.emit(
        opened(
            session_id=parts.id,
            model=settings.model.ref,
            profile=settings.profile_name,
            cwd=str(tools.workspace),
            project=str(place.project),
            other_project=place.other_project or None,
            version=__version__,
            loop_guard=settings.values.guard_mode,
            permission_mode=tools.permissions.mode,
            sandbox=sandbox_fields(tools.sandbox, parts.sandbox_check, notices),
            project_config=trust,
        )
    )


def start_hooks(hooks: SessionHooks, parts: SessionParts, resumed: bool, carried: bool) -> None:
    parts.log.subscribe(hooks.on_event)
    if not carried:  # read now, not carried over from the session before
        hooks.announce_skipped()
    source = "resume" if resumed else "clear" if carried else "startup"
    hooks.session_started(source, parts.settings.model.ref)
