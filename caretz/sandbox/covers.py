"""Mount points bubblewrap leaves on the host, taken away again.

To keep a command from creating `.caretz` (or a repository's missing `.git/hooks`),
bubblewrap mounts an empty read-only directory there, and to mount it, it first creates
that directory on the host (there is no mount without a mount point, and the root above
it is the user's own folder, bound read-write). Left behind, an empty `.caretz` would
show up in the project and in its checkpoints.

One `Covers` per session (it lives in the session's runtime, so a sandbox rebuilt
mid-session shares it). Every bubblewrap command line that may create a mount point on
the host says which (`Launch.mount_points`, from the same mount list the command line
is built from); `tools/process.py`'s `start_process`, the one place commands start,
holds them here for as long as the sandbox runs. When the last sandbox has ended, each
such directory still empty is removed. Not before: removing a mount point detaches the
mount in a running sandbox, which would let that command create the directory after all.

At the session's end `close` first ends every sandbox still running (a hook, a search or
a command whose end was not heard yet), waits for it, and only then removes; and at the
process's exit, once every descendant is dead (sandbox/reaper.py), what is left empty is
removed once more, so a sandbox that was still setting up when the session closed leaves
nothing either.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from caretz.sandbox import reaper


class Covers:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0
        self._created: set[Path] = set()
        self._ever: set[Path] = set()  # every one recorded: looked at once more at exit
        self._enders: dict[int, Callable[[], None]] = {}  # per running sandbox: how to end it
        self._armed = False

    def enter(self, paths: Iterable[Path] = ()) -> None:
        """A sandboxed command is starting: from now until its `leave` no mount point is
        removed, so the command line built next finds on disk what bubblewrap will."""
        with self._lock:
            self._running += 1
            self._record_locked(path for path in paths if not path.exists())

    def record(self, paths: Iterable[Path]) -> None:
        """The mount points a command line entered with may create (`Launch.mount_points`)."""
        with self._lock:
            self._record_locked(paths)

    def started(self, key: int, end: Callable[[], None]) -> None:
        """The sandbox `key` runs; `end` ends it (and waits for it) when the session closes
        first."""
        with self._lock:
            self._enders[key] = end

    def leave(self, key: int | None = None) -> None:
        """A sandboxed command has ended (its sandbox, and so its mounts, are gone)."""
        # Removed under the lock: a command starting meanwhile waits in `enter`, so its
        # bubblewrap never finds a mount point taken away while it sets up.
        with self._lock:
            if key is not None:
                self._enders.pop(key, None)
            self._running = max(0, self._running - 1)
            if self._running == 0:
                self._remove_created_locked()

    def close(self) -> None:
        """The session has ended: the sandboxes still running are ended and waited for,
        then the mount points go (also those whose command's end was not heard yet)."""
        with self._lock:
            enders = list(self._enders.values())
            self._enders.clear()
        for end in enders:
            with contextlib.suppress(OSError):
                end()
        with self._lock:
            self._running = 0
            self._remove_created_locked()

    def _record_locked(self, paths: Iterable[Path]) -> None:
        for path in paths:
            # bubblewrap creates the missing parents too (`.claude` for `.claude/commands`).
            self._created.add(path)
            self._ever.add(path)
            parent = path.parent
            while not parent.exists() and parent != parent.parent:
                self._created.add(parent)
                self._ever.add(parent)
                parent = parent.parent
        if self._created and not self._armed:
            self._armed = True
            reaper.after_descendants_ended(self._remove_at_exit)

    def _remove_at_exit(self) -> None:
        """At exit every descendant is dead, so no sandbox can make a mount point any more:
        one killed while it set up may have made one after `close` looked."""
        with self._lock:
            self._created |= self._ever
            self._remove_created_locked()

    def _remove_created_locked(self) -> None:
        _remove_empty(self._created)
        self._created.clear()


def _remove_empty(paths: Iterable[Path]) -> None:
    for path in sorted(paths, key=lambda p: len(p.parts), reverse=True):
        with contextlib.suppress(OSError):
            path.rmdir()  # only an empty directory; anything else stays
