"""A keep-alive connection: idle up to its own limit, then a deadline for the next request."""

import http.client
import time

import pytest

from sortie.remote import bounded
from sortie.remote.policy import PolicyEndpoint
from sortie.remote.server import AgentServer
from tests.conftest import SERIAL

from .conftest import Walker

pytestmark = SERIAL  # deadlines against the wall clock (tests/conftest.py)


REQUEST, IDLE = 0.6, 2.0


@pytest.fixture
def address(monkeypatch):
    """An agent server whose request deadline and idle limit are a fraction of the real ones."""
    monkeypatch.setattr(bounded, "REQUEST_SECONDS", REQUEST)
    monkeypatch.setattr(bounded, "IDLE_SECONDS", IDLE)
    server = AgentServer(PolicyEndpoint(Walker, "walker", ["rescue"])).start()
    yield server.http.address
    server.stop()


def _hello(connection: http.client.HTTPConnection) -> int:
    connection.request("GET", "/v1/hello")
    answer = connection.getresponse()
    answer.read()
    return answer.status


def test_a_connection_idle_longer_than_the_request_deadline_is_kept(address):
    """Silent between requests for more than the header deadline but under the idle limit."""
    connection = http.client.HTTPConnection(*address, timeout=IDLE * 3)
    try:
        assert _hello(connection) == 200
        socket_before = connection.sock
        time.sleep(REQUEST * 2)
        assert _hello(connection) == 200
        assert connection.sock is socket_before  # the same connection, not a new one
    finally:
        connection.close()


def test_a_request_begun_after_an_answer_has_the_request_deadline(address):
    """Once the next request's first byte arrives, its headers are due within the deadline."""
    connection = http.client.HTTPConnection(*address, timeout=IDLE * 3)
    try:
        assert _hello(connection) == 200
        assert connection.sock is not None
        connection.sock.sendall(b"G")
        started = time.perf_counter()
        assert connection.sock.recv(1) == b""  # cut
        assert time.perf_counter() - started < IDLE
    finally:
        connection.close()
