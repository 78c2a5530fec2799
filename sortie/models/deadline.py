"""A whole-answer deadline for the model client's HTTP calls.

httpx's time-outs bound each read and write, not the answer: a server sending one byte of
its headers or body every few seconds never trips a read time-out, and holds the call (and
the run) for as long as it likes. So the client's connections go through a network backend
that cuts every socket operation at the deadline of the call in progress::

    with whole_answer(30.0):
        sdk.chat.completions.create(...)  # raises openai.APITimeoutError after 30 s at most

A call cut this way fails as any time-out does (``openai.APITimeoutError``), so the client's
retry policy applies to it unchanged. Outside ``whole_answer`` the backend changes nothing.
"""

from __future__ import annotations

import contextlib
import ssl
import time
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from typing import Any

import httpcore2
import httpx2
import openai

_DEADLINE: ContextVar[float | None] = ContextVar("sortie_model_deadline", default=None)
"""The monotonic time by which the call in progress must be answered (None: no deadline)."""


@contextlib.contextmanager
def whole_answer(seconds: float) -> Iterator[None]:
    """Bound the HTTP calls made inside the block to ``seconds`` from now, all of each answer."""
    token = _DEADLINE.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def http_client() -> httpx2.Client:
    """Return an HTTP client for the openai SDK (its own defaults) that obeys ``whole_answer``.

    The transports' connection pools (the direct one and any proxy from the environment)
    get the deadline backend. httpx offers no public way to hand a transport a network
    backend, so it is set on the pool it built; ``tests/models/test_deadline.py`` fails if a
    new httpx moves it.
    """
    client = openai.DefaultHttpxClient()
    for transport in (client._transport, *client._mounts.values()):
        pool = getattr(transport, "_pool", None)
        if isinstance(pool, httpcore2.ConnectionPool):
            pool._network_backend = DeadlineBackend(pool._network_backend)
    return client


def _left(timeout: float | None, late: type[Exception]) -> float | None:
    """Return ``timeout`` cut to what is left before the deadline.

    Raises:
        late: the deadline has passed (the time-out of the operation at hand).
    """
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise late("timed out: the whole answer took longer than its deadline")
    return left if timeout is None else min(timeout, left)


class DeadlineStream(httpcore2.NetworkStream):
    """A connection whose every read and write ends by the deadline of the call in progress."""

    def __init__(self, stream: httpcore2.NetworkStream) -> None:
        """Wrap ``stream``."""
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        """Read up to ``max_bytes``, waiting no longer than the deadline allows."""
        return self._stream.read(max_bytes, _left(timeout, httpcore2.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        """Write ``buffer``, waiting no longer than the deadline allows."""
        self._stream.write(buffer, _left(timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        """Close the connection."""
        self._stream.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore2.NetworkStream:
        """Return the TLS connection over this one, its handshake bounded by the deadline."""
        left = _left(timeout, httpcore2.ConnectTimeout)
        return DeadlineStream(self._stream.start_tls(ssl_context, server_hostname, left))

    def get_extra_info(self, info: str) -> Any:
        """Return the wrapped connection's ``info``."""
        return self._stream.get_extra_info(info)


class DeadlineBackend(httpcore2.NetworkBackend):
    """Opens connections that obey the deadline of the call in progress."""

    def __init__(self, backend: httpcore2.NetworkBackend) -> None:
        """Wrap ``backend`` (httpcore's own)."""
        self._backend = backend

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        """Open a TCP connection, within the deadline."""
        left = _left(timeout, httpcore2.ConnectTimeout)
        stream = self._backend.connect_tcp(host, port, left, local_address, socket_options)
        return DeadlineStream(stream)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.NetworkStream:
        """Open a Unix socket connection, within the deadline."""
        left = _left(timeout, httpcore2.ConnectTimeout)
        return DeadlineStream(self._backend.connect_unix_socket(path, left, socket_options))

    def sleep(self, seconds: float) -> None:
        """Sleep (between httpcore's connection retries)."""
        self._backend.sleep(seconds)
