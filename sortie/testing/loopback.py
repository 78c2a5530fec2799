"""A TCP server on 127.0.0.1 that the protocol doubles (UnrealCV, AirSim) are built on.

It listens on a free port (or the one asked for), accepts connections on a daemon thread and
hands each to ``serve_connection``; ``close`` (or leaving a ``with`` block) stops it. It never
listens beyond loopback.
"""

from __future__ import annotations

import socket
import threading
from typing import Self


class LoopbackServer:
    """Accepts TCP connections on 127.0.0.1 and hands each to ``serve_connection``."""

    def __init__(self, port: int = 0) -> None:
        """Listen on 127.0.0.1:``port`` (0: any free port; see ``self.port``)."""
        self._listener = socket.create_server(("127.0.0.1", port))
        self.port = self._listener.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def serve_connection(self, connection: socket.socket) -> None:
        """Talk to one client until it hangs up (a subclass says how)."""
        raise NotImplementedError

    def close(self) -> None:
        """Stop listening and end the accepting thread."""
        self._stop.set()
        self._listener.close()
        self._thread.join(timeout=2)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            self.on_accept(connection)

    def on_accept(self, connection: socket.socket) -> None:
        """Serve ``connection`` here, one client at a time (override to serve in parallel)."""
        with connection:
            self.serve_connection(connection)
