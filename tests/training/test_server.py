"""The model server a training loop starts: its health is asked of that server only."""

import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from sortie.core.errors import ConfigError
from sortie.training import server as serving


class _Healthy(BaseHTTPRequestHandler):
    """An impostor: answers every health check, serves no model."""

    def do_GET(self):  # noqa: N802 - the name http.server calls
        """Say it is healthy."""
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        """Say nothing."""


def test_a_health_check_another_program_answers_is_refused(tmp_path):
    """A program that took the port first answers /health; the wait refuses it, naming the pid."""
    impostor = ThreadingHTTPServer(("127.0.0.1", 0), _Healthy)
    threading.Thread(target=impostor.serve_forever, daemon=True).start()
    port = impostor.server_address[1]
    started = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        with pytest.raises(ConfigError, match=f"port {port} answered, but not from"):
            serving._wait_healthy(started, port, tmp_path / "log", timeout=10)
    finally:
        started.kill()
        started.wait()
        impostor.shutdown()


def test_the_listener_of_a_process_is_found_among_its_open_files():
    """This process's own listening socket is held by this process, not by another."""
    import os
    import socket

    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        assert serving._holds_listener(os.getpid(), port) is True
        other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        try:
            assert serving._holds_listener(other.pid, port) is False
        finally:
            other.kill()
            other.wait()
