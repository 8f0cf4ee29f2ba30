"""`Session.switch`: the model, the profile, the loop guard's mode or the permission
mode of a live session. Each builds everything first (caretz/runtime/switches.py), so
a ConfigError changes nothing; each returns the one line that says what changed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from caretz.runtime import switches

if TYPE_CHECKING:
    from caretz.app.session import Session


def switch_model(session: Session, ref: str) -> str:
    model = switches.switch_model(session, ref, session.env)
    session.agent.conversation.context.forget()
    return f"model: {model}; the conversation carries on"


def switch_profile(session: Session, name: str) -> str:
    from caretz.config.settings import resolve_settings

    path = session.settings.config_path
    base = session.flags or {"config": path if path.is_file() else None}
    settings = resolve_settings({**base, "profile": name}, session.env)
    switches.apply_settings(session, settings, session.env)
    session.agent.conversation.context.forget()
    mode = session.agent.parts.guard.mode
    return f"profile: {name} · model {settings.model.ref} · loop guard {mode}"


def switch_guard(session: Session, mode: str) -> str:
    switches.set_guard_mode(session, mode)
    judge = session.judge
    by = f", judged by {judge.model_ref}" if judge is not None and mode != "off" else ""
    return f"loop guard: {mode}{by}"


def switch_permissions(session: Session, mode: str) -> str:
    switches.set_permission_mode(session, mode, session.env)
    return f"permissions: {session.settings.permission_mode}"
