"""The agent server: any ``Endpoint`` over HTTP (``GET /v1/hello``, ``POST /v1/reset|act``).

One server holds many sessions (episodes), each with its own policy object, so a run on
several workers can share it. It binds loopback unless told otherwise, answers only
requests from itself (``bounded.SameOrigin``: its Host names, its own Origin, JSON bodies)
and, given a token (``SORTIE_AGENT_TOKEN``, or one ``sortie agent-server`` makes), only
requests that bear it (``Authorization: Bearer <token>``). A served token is also left in a
file only its user may read (``token_path``), where the ``remote`` agent on this machine
finds it. Bad messages get a 4xx with a JSON ``ErrorResponse``; nothing a client sends
stops the server.
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import stat
import threading
import warnings
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from sortie.remote.bounded import (
    LOOPBACK,
    WILDCARDS,
    BoundedServer,
    Request,
    Response,
    SameOrigin,
    allowed_hosts,
)
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
RUNTIME_ENV = "SORTIE_RUNTIME_DIR"
"""Where served tokens are left (default: ``$XDG_RUNTIME_DIR/sortie``, else
``~/.cache/sortie/run``)."""
FROM_ENV = "from-env"
"""``AgentServer(token=FROM_ENV)``: the token is ``SORTIE_AGENT_TOKEN``'s, or none."""
STOP_WAIT = 1.0
"""Seconds ``stop`` waits for a session's step being answered before leaving its policy open."""
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
        self.closed = False

    def act(self, request: ActRequest) -> ActResponse:
        with self.lock:
            if self.closed:  # reset anew or forgotten while this request waited for the lock
                raise WireError(404, "unknown_session", f"session {request.session!r}: reset first")
            if self.last is not None and self.last[0] == request.step:
                return self.last[1]
            response = self.session.act(request.observation)
            self.last = (request.step, response)
            return response

    def close(self, wait: float = -1) -> None:
        """Close the session's policy, if it holds anything, once no step is being answered.

        ``wait``: seconds to wait for a step being answered (-1: as long as it takes); past
        them the policy is left open. A policy whose close raises is a warning: the session is
        gone either way, and the reset that dropped it is another client's, which must not
        fail for it.
        """
        if not self.lock.acquire(timeout=wait):
            return
        try:
            self.closed = True
            close = getattr(self.session, "close", None)
            if close is not None:
                close()
        except Exception as error:  # noqa: BLE001 - see above
            warnings.warn(
                f"a session's policy: close() raised {error!r}", RuntimeWarning, stacklevel=2
            )
        finally:
            self.lock.release()


class AgentServer:
    """Serves an endpoint on ``host:port`` (port 0: a free one), bounded (``remote.bounded``)."""

    def __init__(
        self,
        endpoint: Endpoint,
        host: str = "127.0.0.1",
        port: int = 0,
        max_bytes: int = MAX_REQUEST_BYTES,
        token: str | None = FROM_ENV,
    ) -> None:
        """Bind the socket; by default the token is read from ``SORTIE_AGENT_TOKEN`` now.

        Args:
            endpoint: what is served.
            host: the address to bind; a wildcard (``0.0.0.0``) lets any Host name in.
            port: the TCP port (0: a free one).
            max_bytes: the largest request body.
            token: the token every request must bear; None: none; ``FROM_ENV``: the
                environment's, if set.
        """
        self.endpoint, self.max_bytes = endpoint, max_bytes
        self.token = (os.environ.get(TOKEN_ENV) or None) if token == FROM_ENV else token
        self.origin = SameOrigin(None if host in WILDCARDS else allowed_hosts(host))
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
        """Stop serving, close every open connection and the socket, then every session."""
        self.http.stop()
        with self._lock:
            lives, self._sessions = list(self._sessions.values()), OrderedDict()
        for live in lives:  # a step still being answered is not waited for past a second
            live.close(wait=STOP_WAIT)

    def __enter__(self) -> AgentServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @contextmanager
    def published(self) -> Iterator[Path | None]:
        """Leave the token where this user's ``remote`` agents find it, for the block.

        Yields the file's path (None without a token); it is removed afterwards.
        """
        if self.token is None:
            yield None
            return
        path = token_path(self.http.address[1])
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        with os.fdopen(os.open(path, flags, 0o600), "w", encoding="utf-8") as file:
            file.write(self.token)
        try:
            yield path
        finally:
            path.unlink(missing_ok=True)

    def _gate(self, request: Request) -> Response | None:
        """Refuse a request from elsewhere, or without the token, before reading its body."""
        refused = self.origin.refused(request)
        if refused is not None:
            return _refusal(*refused)
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
            dropped = (
                [self._sessions.pop(request.session)] if request.session in self._sessions else []
            )
            self._sessions[request.session] = live
            while len(self._sessions) > MAX_SESSIONS:
                dropped.append(self._sessions.popitem(last=False)[1])
        for old in dropped:  # a session reset anew or forgotten: its episode is over
            old.close()
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


def new_token() -> str:
    """Return a fresh random token (32 bytes, URL-safe)."""
    return secrets.token_urlsafe(32)


def token_path(port: int) -> Path:
    """Return the file where a server on ``port`` leaves its token for this user's clients."""
    base = os.environ.get(RUNTIME_ENV)
    if not base:
        runtime = os.environ.get("XDG_RUNTIME_DIR")
        base = str(Path(runtime) / "sortie" if runtime else Path.home() / ".cache/sortie/run")
    return Path(base) / f"agent-server-{port}.token"


def client_token(host: str, port: int) -> str | None:
    """Return the token to send to ``host:port`` (None: none).

    ``SORTIE_AGENT_TOKEN``'s if set, else one a server on this machine left for that port
    (loopback addresses only). A left token is read only from a small regular file of
    this user's, never through a link.
    """
    token = os.environ.get(TOKEN_ENV)
    if token or host.strip("[]") not in LOOPBACK:
        return token or None
    path = token_path(port)
    try:
        info = path.lstat()
        mine = not hasattr(os, "getuid") or info.st_uid == os.getuid()
        if not (stat.S_ISREG(info.st_mode) and mine and info.st_size <= 256):
            return None
        return path.read_text(encoding="utf-8").strip() or None
    except (OSError, UnicodeDecodeError):
        return None
