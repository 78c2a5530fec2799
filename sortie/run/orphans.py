"""Processes that must not outlive their parent: the kernel's parent-death signal."""

from __future__ import annotations

import ctypes
import signal
import sys

_PR_SET_PDEATHSIG = 1
"""Linux prctl option: the signal this process gets when its parent dies."""


def die_with_parent() -> None:
    """On Linux, have the kernel kill this process the moment its parent dies.

    A killed main process cannot stop its pool, and a worker busy in native code (rendering)
    may not get to look at its parent for a while; the kernel's signal needs no looking.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # no prctl: the polling thread still ends orphans
        pass
