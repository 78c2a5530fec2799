"""The fork server the workers start from: how it is started, and its first import.

Workers are forked from a fork server (``worker_context``), and each has the kernel kill it
when its parent, the server, dies (``executor._start_worker``). The server itself would
outlive a killed main process: it waits until every process holding its pipe, the workers
included, has let go. So the server imports this module before anything else (the first of
``PRELOAD``), and here asks the kernel to kill it when its parent, the main process, dies: a
killed run leaves no process behind, even a worker busy in native code.

This module imports nothing heavy, so that ``sortie run`` can start the server before its own
imports (``start_worker_server``), and the two import side by side.

Any other process importing this module is left alone: only an import made by the fork
server's own ``main`` acts. (If the main process died before the request took effect, the
server needs no help: it exits when the main process's end of its pipe closes.)
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
import sys
from types import FrameType

from sortie.run.orphans import die_with_parent

PRELOAD = [__name__, "sortie.run.executor", "sortie.backends.embedded"]
"""What the fork server imports once, in order, so that every worker forked from it starts
with it (this module first: it ties the server's life to the main process's)."""
_FORK_SERVER = sys.platform.startswith("linux")
"""Whether workers are forked from a fork server (see ``worker_context``)."""


def start_worker_server() -> None:
    """Start the fork server now, where workers use one, so its imports overlap other work."""
    if _FORK_SERVER:
        worker_context()
        multiprocessing.forkserver.ensure_running()


def worker_context() -> multiprocessing.context.BaseContext:
    """Return how workers start: forked from a fork server on Linux, else spawned.

    The fork server is a fresh interpreter that imports ``PRELOAD`` once; each worker is
    forked from it, ready at once (a spawned worker spent about 0.6 s of CPU importing them,
    so two workers paid 1.2 s before their first step). Like spawn, and unlike a plain fork of
    the main process, no worker inherits the main process's threads, locks or open store.
    Only on Linux: there the kernel kills the server with the main process (this module);
    elsewhere a server would outlive a killed run until its workers finished their episodes.
    """
    if not _FORK_SERVER:
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context


def _in_fork_server() -> bool:
    """Return whether the fork server's ``main`` is what imports this module (its preload)."""
    server = multiprocessing.forkserver.main.__code__
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code is server:
            return True
        frame = frame.f_back
    return False


if _in_fork_server():
    die_with_parent()
