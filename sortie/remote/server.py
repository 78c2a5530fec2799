"""The agent server: any ``Endpoint`` over HTTP (``GET /v1/hello``, ``POST /v1/reset|act``).

One server holds many sessions (episodes), each with its own policy object, so a run on
several workers can share it. It binds loopback unless told otherwise and, when
``SORTIE_AGENT_TOKEN`` is set, answers only requests that bear it
(``Authorization: Bearer <token>``). Bad messages get a 4xx with a JSON ``ErrorResponse``;
nothing a client sends stops the server.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import socket
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from sortie.remote.wire import (
    MAX_REQUEST_BYTES,
    ActRequest,
    ActResponse,
    BriefMessage,
    ErrorResponse,
    Hello,
    ObservationMessage,
    ResetRequest,
    ResetResponse,
    WireError,
    content_length,
    parse_message,
)

TOKEN_ENV = "SORTIE_AGENT_TOKEN"
MAX_SESSIONS = 64
"""Sessions kept at once; the oldest is forgotten first (a finished episode never says so)."""


class Session(Protocol):
    """One episode's policy on the server."""

    def act(self, observation: ObservationMessage) -> ActResponse:
        """Return the action for ``observation``; raise WireError for a bad one."""
        ...


class Endpoint(Protocol):
    """What a server serves: a hello, and a new session per reset."""

    def hello(self) -> Hello:
        """Return who serves and what it needs."""
        ...

    def start(self, seed: int, brief: BriefMessage) -> Session:
        """Start an episode; raise WireError if this policy cannot play it."""
        ...


class _Live:
    """A session and the answer to its last step (a retried step gets the same answer)."""

    def __init__(self, session: Session) -> None:
        self.session, self.lock = session, threading.Lock()
        self.last: tuple[int, ActResponse] | None = None

    def act(self, request: ActRequest) -> ActResponse:
        with self.lock:
            if self.last is not None and self.last[0] == request.step:
                return self.last[1]
            response = self.session.act(request.observation)
            self.last = (request.step, response)
            return response


class AgentServer:
    """Serves an endpoint on ``host:port`` (port 0: a free one) from a threading HTTP server."""

    def __init__(
        self,
        endpoint: Endpoint,
        host: str = "127.0.0.1",
        port: int = 0,
        max_bytes: int = MAX_REQUEST_BYTES,
    ) -> None:
        """Bind the socket; the token is read from ``SORTIE_AGENT_TOKEN`` now."""
        self.endpoint, self.max_bytes = endpoint, max_bytes
        self.token = os.environ.get(TOKEN_ENV) or None
        self._sessions: OrderedDict[str, _Live] = OrderedDict()
        self._lock = threading.Lock()
        self.connections: set[socket.socket] = set()
        """Open client connections, closed by ``stop`` (keep-alive would outlive the server)."""
        self.httpd = QuietServer((host, port), _handler(self))
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Return the server's base URL."""
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> AgentServer:
        """Serve from a background thread; return self."""
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in this thread until ``stop`` (or Ctrl-C)."""
        try:
            self._loop()
        finally:
            self.httpd.server_close()

    def _loop(self) -> None:
        self.httpd.serve_forever(poll_interval=0.05)  # stop() waits one interval at most

    def stop(self) -> None:
        """Stop serving, close every open connection and the socket."""
        self.httpd.shutdown()
        self.httpd.server_close()  # first, so that no client reconnects in the meantime
        with self._lock:
            open_now = list(self.connections)
        for connection in open_now:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> AgentServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- the routes ---------------------------------------------------------------------
    def answer(self, method: str, path: str, body: bytes) -> tuple[int, dict[str, Any]]:
        """Return the status and JSON body for one request (any failure as an ErrorResponse)."""
        try:
            return 200, self._route(method, path, body).model_dump(mode="json")
        except WireError as error:
            return error.status, _error(error.code, error.message)
        except Exception as error:  # noqa: BLE001 - a failing policy is answered, not fatal
            return 500, _error("policy_error", f"{type(error).__name__}: {str(error)[:500]}")

    def _route(self, method: str, path: str, body: bytes) -> Any:
        if (method, path) == ("GET", "/v1/hello"):
            return self.endpoint.hello()
        if (method, path) == ("POST", "/v1/reset"):
            return self._reset(parse_message(ResetRequest, body, self.max_bytes))
        if (method, path) == ("POST", "/v1/act"):
            return self._act(parse_message(ActRequest, body, self.max_bytes))
        served = "GET /v1/hello, POST /v1/reset, POST /v1/act"
        raise WireError(404, "not_found", f"{method} {path}; served: {served}")

    def _reset(self, request: ResetRequest) -> ResetResponse:
        live = _Live(self.endpoint.start(request.seed, request.brief))
        with self._lock:
            self._sessions[request.session] = live
            self._sessions.move_to_end(request.session)
            while len(self._sessions) > MAX_SESSIONS:
                self._sessions.popitem(last=False)
        return ResetResponse(session=request.session)

    def _act(self, request: ActRequest) -> ActResponse:
        with self._lock:
            live = self._sessions.get(request.session)
        if live is None:
            raise WireError(404, "unknown_session", f"session {request.session!r}: reset first")
        return live.act(request)

    def authorised(self, header: str | None) -> bool:
        """Return whether a request with this Authorization header may be served."""
        if self.token is None:
            return True
        scheme, _, given = (header or "").strip().partition(" ")
        if scheme.lower() != "bearer":  # RFC 6750: the token alone is not a credential
            return False
        return hmac.compare_digest(given.strip().encode(), self.token.encode())


class QuietServer(ThreadingHTTPServer):
    """A threading HTTP server that prints no traceback for a client that hung up.

    The agent server and the play page use it; any other error in a handler is still reported.
    """

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Say nothing of a client that went away mid-answer; report anything else."""
        if not isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            super().handle_error(request, client_address)


def _error(code: str, message: str) -> dict[str, Any]:
    return ErrorResponse(error=code, message=message).model_dump(mode="json")


IDLE_SECONDS = 60.0
"""Seconds a connection may stay silent before the server drops it."""


class AgentRequests(BaseHTTPRequestHandler):
    """Answers one connection's requests for the agent server ``agent_server``."""

    agent_server: AgentServer
    protocol_version = "HTTP/1.1"  # keep-alive: one connection per client, not per step
    disable_nagle_algorithm = True  # the body does not wait for the headers to be acked
    timeout = IDLE_SECONDS  # a client that stops talking frees its thread

    def setup(self) -> None:
        """Count the connection as open (``stop`` closes the open ones)."""
        super().setup()
        with self.agent_server._lock:
            self.agent_server.connections.add(self.connection)

    def finish(self) -> None:
        """Count the connection as closed."""
        with self.agent_server._lock:
            self.agent_server.connections.discard(self.connection)
        super().finish()

    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        """Answer a GET (hello)."""
        self._serve("GET")

    def do_POST(self) -> None:  # noqa: N802
        """Answer a POST (start, act, end)."""
        self._serve("POST")

    def _serve(self, method: str) -> None:
        if not self.agent_server.authorised(self.headers.get("Authorization")):
            self.close_connection = True  # its body is not read: the connection is spent
            self._send(401, _error("unauthorized", f"a valid token is needed ({TOKEN_ENV})"))
            return
        body = self._body()
        if body is not None:
            self._send(*self.agent_server.answer(method, self.path, body))

    def _body(self) -> bytes | None:
        """Return the request body, or None after answering a missing or too large one."""
        length = self.headers.get("Content-Length")
        if length is None or content_length(length) is None:
            if self.command == "GET" and length is None:
                return b""
            self.close_connection = True
            self._send(411, _error("malformed", "a Content-Length header is needed"))
            return None
        if int(length) > self.agent_server.max_bytes:
            self.close_connection = True  # the body is not read: the connection is spent
            limit = self.agent_server.max_bytes
            self._send(413, _error("too_large", f"message of {length} bytes; at most {limit}"))
            return None
        return self.rfile.read(int(length))

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Log nothing: a server answering every step would flood the terminal."""


def _handler(server: AgentServer) -> Callable[..., BaseHTTPRequestHandler]:
    """Return the request handler class bound to ``server``."""
    return type("Handler", (AgentRequests,), {"agent_server": server})
