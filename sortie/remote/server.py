"""The agent server: any ``Endpoint`` over HTTP (``GET /v1/hello``, ``POST /v1/reset|act``).

One server holds many sessions (episodes), each with its own policy object, so a run on
several workers can share it. It binds loopback unless told otherwise and, when
``SORTIE_AGENT_TOKEN`` is set, answers only requests that bear it
(``Authorization: Bearer <token>``). Bad messages get a 4xx with a JSON ``ErrorResponse``;
nothing a client sends stops the server.
"""

from __future__ import annotations

import hmac
import json
import os
import threading
from collections import OrderedDict
from typing import Any, Protocol

from sortie.remote.bounded import BoundedServer, Request, Response
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
    """Serves an endpoint on ``host:port`` (port 0: a free one), bounded (``remote.bounded``)."""

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
        self.http = BoundedServer(self._handle, host, port, max_bytes, self._gate, _refusal)

    @property
    def url(self) -> str:
        """Return the server's base URL."""
        host, port = self.http.address
        return f"http://{host!s}:{port}"

    def start(self) -> AgentServer:
        """Serve from a background thread; return self."""
        self.http.start()
        return self

    def serve_forever(self) -> None:
        """Serve in this thread until ``stop`` (or Ctrl-C)."""
        self.http.serve_forever()

    def stop(self) -> None:
        """Stop serving, close every open connection and the socket."""
        self.http.stop()

    def __enter__(self) -> AgentServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _gate(self, request: Request) -> Response | None:
        """Refuse a request without the token before reading its body."""
        if self.authorised(request.headers.get("authorization")):
            return None
        return _refusal(401, "unauthorized", f"a valid token is needed ({TOKEN_ENV})")

    def _handle(self, request: Request) -> Response:
        status, body = self.answer(request.method, request.path, request.body)
        return Response(status, json.dumps(body).encode())

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


def _error(code: str, message: str) -> dict[str, Any]:
    return ErrorResponse(error=code, message=message).model_dump(mode="json")


def _refusal(status: int, code: str, message: str) -> Response:
    """Return an error answer that closes the connection (its body may be unread)."""
    return Response(status, json.dumps(_error(code, message)).encode(), close=True)
