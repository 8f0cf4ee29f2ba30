"""Mount points bubblewrap leaves on the host, taken away again.

To keep a command from creating `.caretz` (or a repository's missing `.git/hooks`),
bubblewrap mounts an empty read-only directory there, and to mount it, it first creates
that directory on the host. Left behind, an empty `.caretz` would show up in the
project and in its checkpoints. `Covers` counts the sandboxed commands running and,
when the last one has ended, removes each such directory that caretz's sandbox created,
if it is still empty. Not before: removing a mount point detaches the mount in a
running sandbox, which would let that command create the directory after all.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable
from pathlib import Path


class Covers:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0
        self._created: set[Path] = set()

    def enter(self, paths: Iterable[Path]) -> None:
        """A sandboxed command is starting; `paths` are the covers its sandbox mounts."""
        with self._lock:
            self._running += 1
            for path in paths:
                # bubblewrap creates the missing parents too (`.claude` for `.claude/commands`).
                while not path.exists() and path != path.parent:
                    self._created.add(path)
                    path = path.parent

    def leave(self) -> None:
        """A sandboxed command has ended (its sandbox, and so its mounts, are gone)."""
        # Removed under the lock: a command starting meanwhile waits in `enter`, so its
        # bubblewrap never finds a mount point taken away while it sets up.
        with self._lock:
            self._running -= 1
            if self._running <= 0:
                self._remove_created()

    def close(self) -> None:
        """The session has ended, and its commands with it: the mount points go even when a
        command's end was not heard yet (`leave` runs on a thread the exit does not wait
        for, so a run that ends right after its last command would leave them)."""
        with self._lock:
            self._running = 0
            self._remove_created()

    def _remove_created(self) -> None:
        for path in sorted(self._created, key=lambda p: len(p.parts), reverse=True):
            with contextlib.suppress(OSError):
                path.rmdir()  # only an empty directory; anything else stays
        self._created.clear()
