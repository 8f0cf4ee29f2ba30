"""A session's checkpoints as refs and commits in the shadow repository.

Each session has one ref, `refs/caretz/sessions/<session>`, whose first-parent chain
is the session's checkpoints, oldest at the root. The metadata sits in each commit's
message, so a resumed session (or another caretz process) lists them from the shadow
repository alone. `refs/caretz/latest` is the project's newest snapshot of any session.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from caretz.checkpoints.errors import CheckpointError, UnknownCheckpoint
from caretz.checkpoints.git import ShadowGit
from caretz.checkpoints.model import Checkpoint, decode_message

SESSIONS = "refs/caretz/sessions/"
LATEST = "refs/caretz/latest"
_PLAIN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*$")
_RECORD, _FIELD = "\x1e", "\x1f"


def session_ref(session: str) -> str:
    """The ref of a session; names git would not take are spelled in hex."""
    if not session:
        raise CheckpointError("a checkpoint needs a session id")
    if _PLAIN_NAME.match(session) and not session.endswith(".lock"):
        return SESSIONS + session
    return SESSIONS + "x-" + session.encode().hex()


def session_of_ref(ref: str) -> str:
    name = ref[len(SESSIONS) :]
    if name.startswith("x-"):
        try:
            return bytes.fromhex(name[2:]).decode()
        except ValueError:
            return name
    return name


def tip(git: ShadowGit, ref: str) -> str | None:
    done = git.call("rev-parse", "--verify", "-q", f"{ref}^{{commit}}")
    found = done.stdout.decode().strip()
    return found if done.returncode == 0 and found else None


def chain(git: ShadowGit, session: str) -> list[Checkpoint]:
    """Every checkpoint of a session, settled states included, oldest first."""
    return read_commits(git, ["--first-parent", session_ref(session)])[::-1]


def read_commits(git: ShadowGit, revisions: Sequence[str]) -> list[Checkpoint]:
    """The checkpoints `git log` shows for `revisions`; none when a ref does not exist."""
    done = git.call("log", f"--format=%H{_FIELD}%T{_FIELD}%B{_RECORD}", *revisions, "--")
    if done.returncode != 0:
        return []
    raw = done.stdout
    found = []
    for record in raw.decode("utf-8", errors="replace").split(_RECORD):
        parts = record.strip("\n").split(_FIELD)
        if len(parts) != 3:
            continue
        checkpoint = decode_message(*parts)
        if checkpoint is not None:
            found.append(checkpoint)
    return found


def sessions(git: ShadowGit) -> list[str]:
    raw = git.text("for-each-ref", "--sort=committerdate", "--format=%(refname)", SESSIONS)
    return [session_of_ref(line) for line in raw.splitlines() if line]


def visible(checkpoints: Sequence[Checkpoint]) -> list[Checkpoint]:
    """Turn and rewind checkpoints, each with what its turn changed once settled."""
    settled = {cp.settles: cp for cp in checkpoints if cp.kind == "settled" and cp.settles}
    shown = []
    for cp in checkpoints:
        if cp.kind == "settled":
            continue
        after = settled.get(cp.id)
        if after is None:
            shown.append(cp)
        else:
            shown.append(
                replace(cp, turn_changed=after.changed, turn_changed_count=after.changed_count)
            )
    return shown


def find(checkpoints: Sequence[Checkpoint], ref: str) -> Checkpoint:
    """A checkpoint by id or unique id prefix (at least 4 characters)."""
    ref = ref.strip().lower()
    matches = [cp for cp in checkpoints if len(ref) >= 4 and cp.id.startswith(ref)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise UnknownCheckpoint(f"checkpoint {ref!r} is ambiguous; give more of its id")
    raise UnknownCheckpoint(f"no checkpoint {ref!r} in this project")


def for_turn(checkpoints: Sequence[Checkpoint], session: str, turn: int) -> Checkpoint:
    """The checkpoint taken before turn `turn`'s first change."""
    turns = [cp for cp in checkpoints if cp.kind == "turn"]
    for cp in turns:
        if cp.turn == turn:
            return cp  # the first one: a turn has one, taken before its first change
    have = ", ".join(str(n) for n in sorted({cp.turn for cp in turns})) or "none"
    raise UnknownCheckpoint(
        f"no checkpoint for turn {turn} of session {session} (turns with one: {have})"
    )
