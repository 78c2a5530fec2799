"""The fork server's first import: it makes the server die with the main process.

Workers are forked from a fork server (``executor.worker_context``), and each has the kernel
kill it when its parent, the server, dies (``executor._start_worker``). The server itself
would outlive a killed main process: it waits until every process holding its pipe, the
workers included, has let go. So the server imports this module before anything else (the
first of ``executor.PRELOAD``), and here asks the kernel to kill it when its parent, the main
process, dies: a killed run leaves no process behind, even a worker busy in native code.

Any other process importing this module is left alone: only an import made by the fork
server's own ``main`` acts. (If the main process died before the request took effect, the
server needs no help: it exits when the main process's end of its pipe closes.)
"""

from __future__ import annotations

import multiprocessing.forkserver
import sys
from types import FrameType

from sortie.run.orphans import die_with_parent


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
