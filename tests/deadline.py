"""A deadline for a block that must not hang (reading a FIFO, a device), without a plug-in."""

import contextlib
import signal


class Late(Exception):
    """Raised in a block that ran too long (not an OSError, which a read might swallow)."""


@contextlib.contextmanager
def within(seconds):
    """Fail the test (instead of hanging it) if the block takes longer than ``seconds``."""

    def late(*_):
        raise Late(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, late)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
