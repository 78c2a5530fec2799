"""Serving a model folder: ``transformers serve``, OpenAI-compatible, on loopback only.

sortie writes no model server of its own (the test doubles in ``sortie.testing`` stand in
for one at a seam; this is the real thing): the model is served by transformers' own
server, the one its documentation names for OpenAI-compatible clients. It listens on
127.0.0.1 at a free port, and is stopped when the ``served`` block ends, however it ends.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sortie.core.errors import ConfigError

RUNNER = """
import ctypes, os, signal, sys
# Stop with the sortie process, however that ends (a kill leaves no `finally` to run):
# Linux sends SIGTERM to this process when its parent dies; elsewhere the block ends it.
if sys.platform.startswith("linux"):
    ctypes.CDLL(None).prctl(1, signal.SIGTERM, 0, 0, 0)  # 1: PR_SET_PDEATHSIG
if os.getppid() != {parent}:
    sys.exit(1)
from transformers.cli.transformers import main
sys.exit(main())
"""
"""The server process: transformers' CLI, after asking to die with its parent."""
START_TIMEOUT = 300.0
"""Seconds a server may take to load its model and answer its health check, unless told
(the training loop scales it to the machine: ``sortie.training.pace``)."""


@dataclass(frozen=True, slots=True)
class Served:
    """Where a served model answers, and the name to ask for it by."""

    base_url: str
    model: str


def free_port() -> int:
    """Return a loopback port that is free now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def command(folder: Path, port: int) -> list[str]:
    """Return the command that serves ``folder`` on ``port``: float32, on a GPU if there is one."""
    return [
        sys.executable,
        "-c",
        RUNNER.format(parent=os.getpid()),
        "serve",
        str(folder),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--device",
        "auto",
        "--dtype",
        "float32",
        "--default-seed",
        "0",
    ]


@contextmanager
def served(folder: Path, log: Path, timeout: float = START_TIMEOUT) -> Iterator[Served]:
    """Serve the model in ``folder`` until the block ends; its output goes to ``log``.

    Raises:
        ConfigError: the server exited, or did not pass its health check in ``timeout``
            seconds; the message names the log.
    """
    port = free_port()
    with log.open("wb") as output:
        process = subprocess.Popen(
            command(folder.resolve(), port), stdout=output, stderr=subprocess.STDOUT
        )
    try:
        _wait_healthy(process, port, log, timeout)
        yield Served(f"http://127.0.0.1:{port}/v1", str(folder.resolve()))
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_healthy(process: subprocess.Popen[bytes], port: int, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ConfigError(f"transformers serve exited with {process.returncode}; see {log}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                pass
        except OSError:
            time.sleep(0.5)
            continue
        _check_owner(process, port)
        return
    raise ConfigError(
        f"transformers serve did not pass its health check in {timeout:.0f} s; see {log}; "
        f"on a slow or busy machine give it longer with --start-timeout SECONDS"
    )


def _check_owner(process: subprocess.Popen[bytes], port: int) -> None:
    """Refuse a health check another program answered (it took the port in between).

    The port was free when it was chosen, but another program may bind it before the server
    does; its answers must not be taken for the model's. On Linux the listening socket's
    inode is looked for among the server's open files; elsewhere nothing can be told.

    Raises:
        ConfigError: the port's listener is not the server sortie started.
    """
    if _holds_listener(process.pid, port) is False:
        raise ConfigError(
            f"port {port} answered, but not from the transformers serve sortie started (pid "
            f"{process.pid}): another program took the port; run the command again"
        )


def _holds_listener(pid: int, port: int) -> bool | None:
    """Return whether process ``pid`` holds the listening TCP socket on ``port`` (None: unknown)."""
    listening = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":  # LISTEN
                listening.add(f"socket:[{fields[9]}]")
    try:
        files = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return None
    return bool(listening & set(filter(None, map(_link, files)))) if listening else None


def _link(path: Path) -> str | None:
    """Return where an open file's link points, or None if it closed meanwhile."""
    try:
        return os.readlink(path)
    except OSError:
        return None
