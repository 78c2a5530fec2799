"""The fork server's first import: it makes the server die with the main process.

Workers are forked from a fork server (``executor.worker_context``), and each has the kernel
kill it when its parent, the server, dies (``executor._start_worker``). The server itself
would outlive a killed main process: it waits until every process holding its pipe, the
workers included, has let go. So the server imports this module before anything else (the
first of ``executor.PRELOAD``), and here asks the kernel to kill it when the main process
dies: a killed run leaves no process behind, even a worker busy in native code.

Any other process importing this module is left alone: only a direct child of the process
named in ``SORTIE_FORK_SERVER_MAIN`` (set by the main process before it starts the server)
acts on it.
"""

from __future__ import annotations

import os

from sortie.run.orphans import die_with_parent

MAIN = "SORTIE_FORK_SERVER_MAIN"
"""Environment variable: the pid of the main process that starts the fork server."""


def _tie_to_main() -> None:
    main = os.environ.get(MAIN)
    if main is None or main != str(os.getppid()):
        return
    die_with_parent()
    if str(os.getppid()) != main:  # the main process died before the line above took effect
        os._exit(1)


_tie_to_main()
