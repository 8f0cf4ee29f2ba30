"""`python -m caretz.batch.launch PARENT_PID ARGS…`: becomes `python -m caretz ARGS…`
after asking the kernel for SIGTERM (caretz's own clean end, exit 143) when the batch
that started it dies, even by SIGKILL, so no task outlives its batch. The request
survives the exec; the interpreter is caretz's own."""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def main() -> None:
    parent, args = int(sys.argv[1]), sys.argv[2:]
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):  # no prctl (not Linux): the batch stops it itself
        pass
    if os.getppid() != parent:  # the batch died before the signal was asked for
        sys.exit(143)
    os.execv(sys.executable, [sys.executable, "-m", "caretz", *args])


if __name__ == "__main__":
    main()
