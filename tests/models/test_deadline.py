"""The whole-answer deadline: a model server trickling its answer is cut at the time-out."""

from __future__ import annotations

import json
import socket
import threading
import time

import httpcore2
import pytest
from pydantic import BaseModel

from sortie.core.errors import ConfigError
from sortie.models import ModelCallError, ModelClient, ModelConfig
from sortie.models.deadline import DeadlineBackend, http_client
from tests.conftest import SERIAL
from tests.models.conftest import FAST

pytestmark = SERIAL  # time-outs against the wall clock (tests/conftest.py)


BYTE_EVERY = 0.05
"""Seconds between two bytes of a trickled answer: each read gets a byte well in time."""


class Answer(BaseModel):
    """The schema the tests ask for."""

    command: str


def completion() -> bytes:
    """Return the body of a chat completion answering ``{"command": "forward"}``."""
    message = {"role": "assistant", "content": '{"command": "forward"}'}
    body = {"id": "x", "object": "chat.completion", "created": 0, "model": "m"}
    body["choices"] = [{"index": 0, "finish_reason": "stop", "message": message}]
    return json.dumps(body).encode()


def answer(body: bytes) -> tuple[bytes, bytes]:
    """Return a 200's head (with a long header, to trickle for long) and ``body``."""
    head = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Slow: " + b"y" * 400 + b"\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n"
    )
    return head, body


class Trickler:
    """A server on 127.0.0.1 answering each request with ``head`` and ``body``, slowly.

    ``slow`` says where the answer starts to go a byte at a time: ``"head"`` (all of it),
    ``"body"``, or nowhere (``"none"``). Every connection is served, so retries meet the
    same server.
    """

    def __init__(self, head: bytes, body: bytes, slow: str) -> None:
        """Listen on an ephemeral port and serve in daemon threads."""
        self.head, self.body, self.slow = head, body, slow
        self.requests = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def base_url(self) -> str:
        """Return the base URL to give a client."""
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}/v1"

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            try:
                connection.recv(65536)
                self.requests += 1
                whole = self.head + self.body
                cut = {"head": 0, "body": len(self.head)}.get(self.slow, len(whole))
                fast, slow = whole[:cut], whole[cut:]
                connection.sendall(fast)
                for byte in slow:
                    time.sleep(BYTE_EVERY)
                    connection.sendall(bytes([byte]))
            except OSError:
                return

    def close(self) -> None:
        """Stop listening."""
        self._listener.close()


def client(url: str, **args: str) -> ModelClient:
    settings = {"model": "m", "base_url": url, **FAST, "health_wait": "0", **args}
    return ModelClient(ModelConfig.from_args(settings))


@pytest.mark.parametrize("slow", ["head", "body"])
def test_a_trickled_answer_times_out_and_is_retried_as_any_time_out(secret, slow):
    """A head or body sent a byte at a time ends each attempt at the time-out; retries follow."""
    server = Trickler(*answer(completion()), slow=slow)
    asker = client(server.base_url, timeout="0.5", max_retries="1")
    started = time.monotonic()
    try:
        with pytest.raises(ModelCallError) as error:
            asker.ask([], Answer)
    finally:
        asker.close()
        server.close()
    assert time.monotonic() - started < 10.0  # not the 24 s or more the trickle takes
    assert error.value.kind == "timeout" and server.requests == 2
    assert error.value.calls[-1].attempts == 2


def test_an_answer_within_the_time_out_passes(secret):
    """The deadline cuts only late answers: one sent at once is read whole."""
    server = Trickler(*answer(completion()), slow="none")
    asker = client(server.base_url, timeout="5")
    try:
        reply = asker.ask([], Answer)
    finally:
        asker.close()
        server.close()
    assert reply.value == Answer(command="forward")


def test_a_preflight_against_a_trickling_model_list_times_out(secret):
    """The pre-flight's model list, trickled: unreachable (timed out) within the time-out."""
    body = json.dumps({"object": "list", "data": [{"id": "m", "object": "model"}]}).encode()
    server = Trickler(*answer(body), slow="head")
    asker = client(server.base_url, timeout="0.5")
    started = time.monotonic()
    try:
        with pytest.raises(ConfigError, match="unreachable.*timed out"):
            asker.preflight()
    finally:
        asker.close()
        server.close()
    assert time.monotonic() - started < 10.0  # not the 24 s the trickle takes


def test_the_sdk_connections_go_through_the_deadline_backend():
    """Every connection pool of the SDK's HTTP client has the deadline (an httpx upgrade check)."""
    pool = http_client()._transport._pool
    assert isinstance(pool, httpcore2.ConnectionPool)
    assert isinstance(pool._network_backend, DeadlineBackend)
