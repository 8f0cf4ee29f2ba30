"""SIGTERM and SIGHUP end a run the way Ctrl-C does.

A closed terminal (SIGHUP) or a cancelled CI job (SIGTERM) would otherwise kill caretz
where it stands: no `Turn.Ended` in the log, a running command left to its fate. Inside
`signals_interrupt()` either signal raises `Terminated`, a KeyboardInterrupt, in the main
thread, so the path Ctrl-C takes runs: the bash tool kills its command's process group, the
turn loop answers the open tool calls and writes `Turn.Ended`, and the exit code is
128 + the signal's number (143, 129).

A signal the process was started with ignored stays ignored: `nohup caretz -p …` asked
for hangups to pass it by, and a handler would end the run on the first one.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from caretz.agent.outcomes import Interrupted

ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived: end the run like Ctrl-C, with the signal's exit code."""

    def __init__(self, signum: int):
        self.signum = signum
        self.name = signal.Signals(signum).name
        super().__init__(f"ended by {self.name}")

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


@contextmanager
def signals_interrupt() -> Iterator[None]:
    """While inside, the first SIGTERM or SIGHUP raises Terminated; later ones are ignored
    so the clean-up they started can finish. One ignored when the block starts (inherited
    as ignored: nohup, a shell's `trap '' TERM`) stays ignored."""
    received: list[int] = []

    def interrupt(signum: int, frame: FrameType | None) -> None:
        if received:
            return
        received.append(signum)
        raise Terminated(signum)

    previous = {
        signum: signal.signal(signum, interrupt)
        for signum in ENDING_SIGNALS
        if not is_ignored(signum)
    }
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def is_ignored(signum: int) -> bool:
    """Whether `signum` is ignored now (as a child that inherited SIG_IGN starts)."""
    return signal.getsignal(signum) == signal.SIG_IGN


def interrupted_by(interrupt: KeyboardInterrupt) -> Interrupted:
    """How a turn that Ctrl-C or an ending signal stopped ends."""
    if isinstance(interrupt, Terminated):
        return Interrupted(str(interrupt), interrupt.exit_code)
    return Interrupted("interrupted by the user")


def interruption(exit_code: int) -> KeyboardInterrupt:
    """The interrupt that ended a turn with `exit_code`, to raise again in its caller."""
    signum = exit_code - 128
    if signum in ENDING_SIGNALS:
        return Terminated(signum)
    return KeyboardInterrupt()
