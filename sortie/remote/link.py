"""One keep-alive HTTP connection to an agent server, with a time-out and a size limit."""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from sortie.core.errors import ConfigError
from sortie.remote.server import client_token
from sortie.remote.wire import content_length

_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)
"""How a kept-alive connection that the server closed while idle fails."""


class LinkError(Exception):
    """The connection failed: refused, reset, timed out, or closed mid-answer."""


@dataclass(frozen=True, slots=True)
class Answer:
    """A status and a body (None when the body was larger than allowed and left unread)."""

    status: int
    body: bytes | None


class Link:
    """Sends requests to ``url`` over one connection, opened again after a failure."""

    def __init__(self, url: str, timeout: float, max_bytes: int) -> None:
        """Check the URL; nothing is contacted yet.

        Raises:
            ConfigError: not an ``http://host:port`` URL.
        """
        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise ConfigError(f"agent url {url!r}: expected http://HOST:PORT")
        try:
            self.port = parts.port or 80
        except ValueError:
            raise ConfigError(f"agent url {url!r}: the port is not a number") from None
        self.host, self.prefix = parts.hostname, parts.path.rstrip("/")
        self.timeout, self.max_bytes = timeout, max_bytes
        self._connection: http.client.HTTPConnection | None = None

    @property
    def address(self) -> str:
        """Return ``host:port``."""
        return f"{self.host}:{self.port}"

    def send(self, method: str, path: str, body: bytes | None = None) -> Answer:
        """Send one request and read the answer.

        Raises:
            LinkError: the connection failed; it is closed, the next request opens another.
        """
        reused = self._connection is not None
        try:
            return self._send(method, path, body)
        except _STALE:
            self.close()
            if not reused:
                raise LinkError("connection lost (the server closed it)") from None
        except (OSError, http.client.HTTPException) as error:
            self.close()
            raise LinkError(_cause(error)) from None
        try:  # a kept-alive connection the server had closed meanwhile: once more, afresh
            return self._send(method, path, body)
        except (OSError, http.client.HTTPException) as error:
            self.close()
            raise LinkError(_cause(error)) from None

    def token(self) -> str | None:
        """Return the token to send: from the environment or the server's file, never a record."""
        return client_token(self.host, self.port)

    def close(self) -> None:
        """Close the connection."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def _send(self, method: str, path: str, body: bytes | None) -> Answer:
        if self._connection is None:
            self._connection = http.client.HTTPConnection(
                self.host, self.port, timeout=self.timeout
            )
        # The socket's time-out bounds each read only; a server trickling its answer's head a
        # byte at a time would never trip it. The watchdog cuts the connection when the whole
        # exchange is not over within the time-out.
        expired = threading.Event()
        watchdog = threading.Timer(self.timeout, _cut, (self._connection, expired))
        watchdog.daemon = True
        watchdog.start()
        late = f"timed out: the answer took longer than {self.timeout:g} s"
        try:
            answer = self._exchange(method, path, body, time.monotonic() + self.timeout)
        except (OSError, http.client.HTTPException) as error:
            # The socket's own time-out and the watchdog race at the same instant on a loaded
            # machine: either way the answer was late, and says so the same way.
            if expired.is_set() or isinstance(error, TimeoutError):
                raise TimeoutError(late) from None
            raise
        finally:
            watchdog.cancel()
        if expired.is_set():  # cut mid-body: what was read ended early, it is not the answer
            self.close()
            raise TimeoutError(late)
        return answer

    def _exchange(self, method: str, path: str, body: bytes | None, deadline: float) -> Answer:
        assert self._connection is not None
        headers = _headers(self.token())
        self._connection.request(method, self.prefix + path, body=body, headers=headers)
        response = self._connection.getresponse()
        header = response.getheader("Content-Length")
        length = content_length(header)
        if header is not None and (length is None or length > self.max_bytes):
            self.close()  # the body stays unread, so the connection cannot be used again
            return Answer(response.status, None)
        try:
            data = self._read_by(response, deadline)
        finally:  # the next request on this kept-alive connection gets the full time-out again
            if self._connection is not None and self._connection.sock is not None:
                self._connection.sock.settimeout(self.timeout)
        if len(data) > self.max_bytes:
            self.close()
            return Answer(response.status, None)
        return Answer(response.status, data)

    def _read_by(self, response: http.client.HTTPResponse, deadline: float) -> bytes:
        """Return the body (at most ``max_bytes`` + 1), all of it before ``deadline``.

        The socket's time-out bounds each read; a server trickling its answer byte by byte
        must still finish within ``timeout`` seconds of the request.

        Raises:
            TimeoutError: the deadline passed first.
        """
        chunks, size = [], 0
        while size <= self.max_bytes:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"timed out: the answer took longer than {self.timeout:g} s")
            if self._connection is not None and self._connection.sock is not None:
                self._connection.sock.settimeout(left)
            chunk = response.read1(min(65536, self.max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if response.length == 0:  # all of it: read1 leaves the response open, close it
                response.close()  # (the kept-alive connection stays open for the next request)
                break
        return b"".join(chunks)


def _cut(connection: http.client.HTTPConnection, expired: threading.Event) -> None:
    """Cut ``connection`` whose answer is late: its reader then fails at once."""
    expired.set()
    sock = connection.sock
    if sock is not None:
        with contextlib.suppress(OSError):  # closed meanwhile
            sock.shutdown(socket.SHUT_RDWR)


def _headers(token: str | None) -> dict[str, str]:
    """Return the request headers (with the token, if there is one)."""
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers


def _cause(error: Exception) -> str:
    """Return a failed connection's cause in words."""
    if isinstance(error, TimeoutError):
        return str(error) if error.args else "timed out"
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(error, http.client.RemoteDisconnected | ConnectionResetError | BrokenPipeError):
        return "connection lost (the server closed it)"
    return f"{type(error).__name__}: {error}"
