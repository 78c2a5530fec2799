"""After a time-out, a local server is retried only once it passes its health check."""

import socket
import threading
import time

import pytest

from sortie.models import ModelCallError, ModelClient, ModelConfig
from sortie.models import health as health_module
from sortie.models.health import health_url, is_local
from sortie.testing.model_server import Fault, ModelServer
from tests.conftest import SERIAL
from tests.models.conftest import FAST
from tests.models.test_client import MESSAGES, Answer, answer, client

pytestmark = SERIAL  # time-outs and waits against the wall clock (tests/conftest.py)


@pytest.fixture(autouse=True)
def quick_polls(monkeypatch):
    """Ask a server that is not ready again after 50 ms, not half a second."""
    monkeypatch.setattr(health_module, "POLL", 0.05)


def test_retry_waits_for_the_abandoned_answer(secret):
    """A one-slot server still computing a timed-out answer is waited for, then asked again.

    Sent at once, the retry would queue behind the 2 s answer and time out in turn
    (0.5 s each, one retry): the call would fail.
    """
    with ModelServer(answer, serial=True, health=True) as server:
        server.inject(Fault.LATENCY, delay=2.0)
        ask = client(server, timeout="0.5", max_retries="1", health_wait="5")
        reply = ask.ask(MESSAGES, Answer)
        sent = [request["max_tokens"] for request in server.requests]
        assert server.health_checks == 1
    assert reply.value == Answer(command="forward") and reply.calls[0].attempts == 2
    assert sent[1] == 1 and len(sent) == 3  # the health check's one-token request
    assert reply.calls[0].latency >= 2.0  # the wait is part of the call's time


def test_the_wait_and_the_failed_attempt_are_recorded_apart(secret):
    """A time-out's attempt and the health wait after it are split out of the call's latency."""
    with ModelServer(answer, serial=True, health=True) as server:
        server.inject(Fault.LATENCY, delay=2.0)
        ask = client(server, timeout="0.5", max_retries="1", health_wait="5")
        call = ask.ask(MESSAGES, Answer).calls[0]
    assert 0.5 <= call.failed_time < 1.0  # the time-out
    assert call.waited >= 1.3  # the rest of the abandoned 2 s answer, and the backoff
    assert call.latency - call.waited - call.failed_time < 0.5  # the answer itself


def test_the_health_wait_is_the_timeout_unless_set(secret):
    """Unset, the wait after a time-out lasts as long as the time-out, not ten minutes."""
    with ModelServer(answer, serial=True, health=True) as server:
        server.inject(Fault.LATENCY, delay=3.0)
        with pytest.raises(ModelCallError, match="did not pass its health check in 0.4 s"):
            client(server, timeout="0.4", max_retries="1").ask(MESSAGES, Answer)


def test_a_loading_server_is_asked_until_it_is_healthy(secret):
    """503s from ``/health`` (a model still loading) are waited out before the retry."""
    with ModelServer(answer, health=True) as server:
        server.inject(Fault.LATENCY, delay=2.5)
        server.sick(3)
        reply = client(server, timeout="1.0").ask(MESSAGES, Answer)
        assert server.health_checks == 4
    assert reply.value is not None and reply.calls[0].attempts == 2


def test_a_server_that_stays_busy_fails_the_call(secret):
    """A server busy past ``health_wait`` ends the call as a time-out that says why."""
    with ModelServer(answer, serial=True, health=True) as server:
        server.inject(Fault.LATENCY, delay=3.0)
        started = time.perf_counter()
        with pytest.raises(ModelCallError, match="did not pass its health check in 0.5 s"):
            client(server, timeout="0.3", health_wait="0.5").ask(MESSAGES, Answer)
        waited = time.perf_counter() - started
        assert server.count == 1  # no retry was sent (the health request still queues)
    assert waited < 2.0


def test_a_local_server_that_stopped_fails_the_call_at_once(secret):
    """A server that took the request, then went away: no ten-minute wait for its health."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    held = []

    def take_then_stop() -> None:  # keep the request's connection open, refuse any other
        held.append(listener.accept()[0])
        listener.close()

    threading.Thread(target=take_then_stop, daemon=True).start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    client = ModelClient(ModelConfig.from_args({"model": "m", "base_url": url, **FAST}))
    started = time.perf_counter()
    with pytest.raises(ModelCallError, match="connection refused; the server is not running"):
        client.ask(MESSAGES, Answer)
    assert time.perf_counter() - started < 4.0  # the 2 s time-out, then no wait
    for connection in held:
        connection.close()


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://127.0.0.1:8000/v1", True),
        ("http://localhost:8080/v1", True),
        ("http://[::1]:8000/v1", True),
        ("http://127.0.1.1/v1", True),
        ("https://api.openai.com/v1", False),
        ("http://10.0.0.5:8000/v1", False),
        ("http://gpu-box.lab:8000/v1", False),
    ],
)
def test_only_servers_on_this_machine_are_checked(url, local):
    assert is_local(url) is local


def test_the_health_route_sits_beside_v1():
    assert health_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/health"
    assert health_url("http://127.0.0.1:8000/v1/") == "http://127.0.0.1:8000/health"
    assert health_url("http://localhost:9/llm/v1") == "http://localhost:9/llm/health"
