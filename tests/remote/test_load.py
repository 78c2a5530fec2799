"""A bounded loopback load test of both servers: 300 connections at once, well under 60 s.

290 well-behaved clients each get their answer; 10 slow ones (slowloris: a header byte now
and then) are cut once the request deadline passes, while they are still trickling.
"""

import asyncio
import time
from pathlib import Path

import pytest

from sortie.remote import bounded
from sortie.remote.human import Desk
from sortie.remote.page import PageServer
from sortie.remote.policy import PolicyEndpoint
from sortie.remote.server import AgentServer
from tests.conftest import SERIAL

from .conftest import Walker

pytestmark = SERIAL  # deadlines against the wall clock, 1,000 sockets (tests/conftest.py)


CLIENTS, SLOW, DEADLINE = 290, 10, 2.0


async def _ask(host: str, port: int, path: str) -> int:
    """Open a connection, GET ``path``, return the status (0 if the answer never came)."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        await writer.drain()
        line = await asyncio.wait_for(reader.readline(), 20.0)
        return int(line.split()[1]) if line else 0
    finally:
        writer.close()


async def _trickle(host: str, port: int) -> float:
    """Send a request's head a byte every 0.2 s; return the seconds until the server cut it."""
    started = time.perf_counter()  # before connecting: the server's clock starts at its accept
    reader, writer = await asyncio.open_connection(host, port)
    head = f"GET /v1/hello HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Slow: ".encode() + b"y" * 500
    try:
        for byte in head:
            writer.write(bytes([byte]))
            await writer.drain()
            if await _closed(reader):
                return time.perf_counter() - started
        return float("inf")  # sent it all: never cut
    except ConnectionError:
        return time.perf_counter() - started
    finally:
        writer.close()


async def _closed(reader: asyncio.StreamReader) -> bool:
    try:
        return await asyncio.wait_for(reader.read(1), 0.2) == b""
    except TimeoutError:
        return False


async def _load(host: str, port: int, path: str) -> tuple[list[int], list[float]]:
    slow = [asyncio.create_task(_trickle(host, port)) for _ in range(SLOW)]
    fast = await asyncio.gather(*(_ask(host, port, path) for _ in range(CLIENTS)))
    return list(fast), list(await asyncio.gather(*slow))


@pytest.mark.parametrize("which", ["agent-server", "play"])
def test_300_connections_at_once_are_answered_and_slow_ones_cut(which, monkeypatch):
    monkeypatch.setattr(bounded, "REQUEST_SECONDS", DEADLINE)
    if which == "agent-server":
        server, path = (
            AgentServer(PolicyEndpoint(Walker, "walker", ["rescue"])).start(),
            "/v1/hello",
        )
    else:
        server, path = PageServer(Desk(), port=0).start(), "/play/state"
    host, port = server.http.address
    started = time.perf_counter()
    try:
        answered, cut_after = asyncio.run(_load(host, port, path))
    finally:
        server.stop()
    assert answered == [200] * CLIENTS  # no time-out, no refusal for a well-behaved client
    assert all(DEADLINE - 0.5 <= seconds <= DEADLINE + 3.0 for seconds in cut_after), cut_after
    assert time.perf_counter() - started < 60.0


IDLE_MANY, SLOW_MANY, GOOD = 600, 400, 50


def _resident_bytes() -> int:
    """Return this process's resident memory, bytes (Linux: /proc/self/statm)."""
    import os

    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE")


async def _crowd(host: str, port: int) -> tuple[list[int], int]:
    """Open 600 silent and 400 trickling connections, then ask 50 times; close them all."""
    crowd = [await asyncio.open_connection(host, port) for _ in range(IDLE_MANY + SLOW_MANY)]
    for _, writer in crowd[IDLE_MANY:]:
        writer.write(b"GET /v1/hello HTTP/1.1\r\nX-Slow: ")
    answered = await asyncio.gather(*(_ask(host, port, "/v1/hello") for _ in range(GOOD)))
    held = _resident_bytes()
    for _, writer in crowd:
        writer.close()
    return list(answered), held


def test_a_thousand_idle_or_slow_connections_never_crowd_out_a_working_client(monkeypatch):
    """With 1,000 silent or trickling sockets open, every client gets its 200, in bounded memory."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < 4096:
        pytest.skip(f"the open-file limit {hard} cannot hold 2,000 sockets")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 4096), hard))
    monkeypatch.setattr(bounded, "REQUEST_SECONDS", 30.0)  # the crowd stays for the test
    server = AgentServer(PolicyEndpoint(Walker, "walker", ["rescue"])).start()
    before = _resident_bytes()
    try:
        answered, held = asyncio.run(_crowd(*server.http.address))
    finally:
        server.stop()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert answered == [200] * GOOD
    assert held - before < 64 * 2**20


def test_past_the_open_connection_cap_the_longest_idle_one_is_closed(monkeypatch):
    """A connection beyond MAX_OPEN closes the one idle the longest, never a busy one."""
    import socket

    monkeypatch.setattr(bounded, "MAX_OPEN", 3)
    server = AgentServer(PolicyEndpoint(Walker, "walker", ["rescue"])).start()
    host, port = server.http.address
    try:
        first = socket.create_connection((host, port))
        time.sleep(0.2)
        others = [socket.create_connection((host, port)) for _ in range(3)]
        first.settimeout(5)
        assert first.recv(1) == b""  # the oldest idle one was closed
        for other in others:
            other.settimeout(0.3)
            with pytest.raises(TimeoutError):  # still open: nothing to read, no EOF
                other.recv(1)
    finally:
        for connection in [first, *others]:
            connection.close()
        server.stop()
