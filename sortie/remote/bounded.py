"""The HTTP layer of sortie's two servers (the agent server, the play page): uvicorn, bounded.

Why uvicorn: a well-kept HTTP/1.1 server (h11) on asyncio, so an idle or slow connection
costs a coroutine and a socket, not a thread; it takes a long listen backlog and drops idle
keep-alive connections. What it lacks, this module adds: requests in flight capped apart from
open connections (``MAX_CONNECTIONS``: beyond it, 503 at once instead of a queue that times
clients out), so idle or half-open sockets never crowd out a working client; open connections
capped on their own (``MAX_OPEN``: past it, the longest idle one is closed); the bytes of the
bodies held at once bounded (``BODY_BUDGET``), so memory has a ceiling however many clients
send at once; deadlines for a request (``REQUEST_SECONDS`` for its headers, as long again for
its body): a client that has not sent them by then is cut (slowloris), where uvicorn would
wait on its headers for ever; and a byte budget on every body however it is framed: a
stated length over the cap is refused unread, a chunked body is counted as it arrives and
cut at the cap, a compressed one is refused (nothing is unpacked). Handlers are plain
functions of a ``Request``, run on a bounded thread pool (``WORKERS``), so a slow policy
holds a worker, never the event loop.

The limits (docs/remote.md lists them): ``MAX_CONNECTIONS``, ``MAX_OPEN``, ``BODY_BUDGET``,
``BACKLOG``, ``IDLE_SECONDS``, ``REQUEST_SECONDS``, ``WORKERS``, and each server's own largest
body.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

MAX_CONNECTIONS = 512
"""Requests in flight at once; more are answered 503 at once (idle connections do not count)."""
MAX_OPEN = 2048
"""Open connections, idle ones included; a new one past it closes the longest idle one."""
BODY_BUDGET = 256 * 2**20
"""Bytes of request bodies held at once, all clients together; a body that would pass it is
answered 503 ``busy`` (the server's memory stays bounded whatever the clients send)."""
BACKLOG = 1024
"""Connections the kernel queues before the server accepts them."""
IDLE_SECONDS = 60.0
"""Seconds a keep-alive connection may stay silent between requests before it is closed."""
REQUEST_SECONDS = 30.0
"""Seconds a client has to send a request's headers (from the connection, or from the first
byte after the last answer), and then as long again for its body; past either, it is cut."""
WORKERS = 16
"""Threads running handlers at once; further requests wait for one (their deadline holds)."""


@dataclass(frozen=True, slots=True)
class Request:
    """One request as a handler sees it: headers by lower-case name, the whole body."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes = b""


@dataclass(frozen=True, slots=True)
class Response:
    """One answer: status, body and its type; ``close`` ends the connection after it."""

    status: int
    body: bytes
    content_type: str = "application/json"
    close: bool = False
    headers: Mapping[str, str] = field(default_factory=dict)


Handler = Callable[[Request], Response]
Gate = Callable[[Request], Response | None]
"""Checks a request before its body is read (a refusal leaves the body unread)."""
Refusal = Callable[[int, str, str], Response]
"""Makes the server's error answer of a status, an error code and a message."""


LOOPBACK = ("127.0.0.1", "localhost", "::1")
"""The names of this machine that a server bound to loopback answers to."""
WILDCARDS = ("0.0.0.0", "::", "")
"""Bound addresses that mean every address of the machine."""


def allowed_hosts(bound: str) -> frozenset[str]:
    """Return the Host names a server bound to ``bound`` answers to: loopback's and its own."""
    return frozenset((*LOOPBACK, bound)) - set(WILDCARDS)


@dataclass(frozen=True, slots=True)
class SameOrigin:
    """Who may reach a server: by one of its names (Host), from its own pages (Origin), JSON.

    A page of another site reaching a loopback port through a rebound DNS name sends that
    name as Host; a page of another site posting to the port sends its own Origin; a form
    or a ``text/plain`` fetch needs no leave from the browser, a JSON one does. ``names``
    None (a server bound to every address) lets any Host in; the port is never checked, so
    a tunnel to another local port still works.
    """

    names: frozenset[str] | None

    def refused(self, request: Request) -> tuple[int, str, str] | None:
        """Return (status, code, message) for a request from elsewhere, or None."""
        host = request.headers.get("host", "")
        if self.names is not None and _split(host)[0] not in self.names:
            allowed = ", ".join(sorted(self.names))
            return 403, "refused", f"Host {host!r}; allowed: {allowed} (any port)"
        if request.method != "POST":
            return None
        origin = request.headers.get("origin")
        if origin is not None and origin.lower() != f"http://{host}".lower():
            return 403, "refused", f"Origin {origin!r}: only http://{host} may post here"
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            return 415, "unsupported", f"Content-Type {kind or 'none'!r}; need application/json"
        return None


def _split(host: str) -> tuple[str, str]:
    """Return a Host header's name (without IPv6 brackets, lower case) and port."""
    name, port = host.strip().lower(), ""
    if name.startswith("["):
        name, _, rest = name[1:].partition("]")
        port = rest.removeprefix(":")
    elif ":" in name:
        name, _, port = name.rpartition(":")
    return name, port


_THREADS = "sortie-http"
"""The name prefix of the handler threads."""


class DeadlineProtocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with a deadline for receiving each request's headers.

    The deadline runs from the connection's start, and from the first byte that follows an
    answer; it stops once a request's headers are in (its body has a deadline of its own, in
    the application). Between an answer and that byte the connection is idle, and may stay
    so for ``IDLE_SECONDS``.
    """

    _deadline: asyncio.TimerHandle | None = None
    _idle = False
    _idle_since: float | None = None
    """When the connection last became idle (no request begun); None: a request is under way."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Start the connection and its first request's deadline."""
        super().connection_made(transport)
        connection = transport.get_extra_info("socket")
        if connection is not None:  # an answer's head and body are two writes: no Nagle wait
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._idle_since = self.loop.time()
        self._arm(REQUEST_SECONDS)
        if len(self.connections) > MAX_OPEN:
            _close_longest_idle(self.connections)

    def data_received(self, data: bytes) -> None:
        """Take bytes; the first after an answer starts the next request's deadline."""
        if self._idle:
            self._idle = False
            self._arm(REQUEST_SECONDS)
        self._idle_since = None
        super().data_received(data)

    def handle_events(self) -> None:
        """Read what arrived; once a request has begun, its headers are in: stop the clock."""
        super().handle_events()
        if self.cycle is not None and not self.cycle.response_complete:
            self._disarm()

    def on_response_complete(self) -> None:
        """After an answer, the connection may stay idle until the next request begins."""
        super().on_response_complete()
        if not self.transport.is_closing():
            self._idle, self._idle_since = True, self.loop.time()
            self._arm(IDLE_SECONDS)

    def connection_lost(self, exc: Exception | None) -> None:
        """Forget the deadline of a connection that ended."""
        self._disarm()
        super().connection_lost(exc)

    def _arm(self, seconds: float) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, self.transport.close)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None


def _close_longest_idle(connections: set[Any]) -> None:
    """Close the open connection idle the longest (the newest, if none is idle)."""
    idle = [c for c in connections if getattr(c, "_idle_since", None) is not None]
    if idle:
        oldest = min(idle, key=lambda c: c._idle_since)
        oldest.transport.close()


class BoundedServer:
    """Serves ``handler`` on ``host:port`` (port 0: a free one) with the limits above."""

    def __init__(
        self,
        handler: Handler,
        host: str,
        port: int,
        max_body: int,
        gate: Gate | None = None,
        refusal: Refusal | None = None,
    ) -> None:
        """Bind and listen now (so a port in use fails here, with an OSError)."""
        self.handler, self.max_body, self.gate = handler, max_body, gate
        self.refusal = refusal or _refusal
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.socket = socket.socket(family, socket.SOCK_STREAM)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.socket.bind((host, port))
            # Listening now: a client told the address (a printed URL) can connect at once;
            # it waits in the backlog until the loop starts.
            self.socket.listen(BACKLOG)
        except OSError:
            self.socket.close()
            raise
        self.address: tuple[str, int] = self.socket.getsockname()[:2]
        self._pool = ThreadPoolExecutor(WORKERS, thread_name_prefix=_THREADS)
        self._active = 0
        """Requests in flight (counted on the event loop's thread only)."""
        self._held = [0]
        """Bytes of bodies being read or handled, all requests together (``BODY_BUDGET``)."""
        config = uvicorn.Config(
            self._app,
            http=DeadlineProtocol,
            interface="asgi3",
            proxy_headers=False,  # loopback by default: no proxy's headers are trusted
            lifespan="off",
            log_level="error",
            access_log=False,
            limit_concurrency=None,  # requests in flight are capped in _app, idle sockets apart
            backlog=BACKLOG,
            timeout_keep_alive=int(IDLE_SECONDS),
            timeout_graceful_shutdown=1,
        )
        self.server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self) -> BoundedServer:
        """Serve from a background thread; return once the server is up."""
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()
        while not self.server.started and self._thread.is_alive():
            time.sleep(0.01)
        return self

    def serve_forever(self) -> None:
        """Serve in this thread until ``stop`` (in the main thread: or Ctrl-C)."""
        try:
            asyncio.run(self._serve())
        finally:
            self.socket.close()
            self._pool.shutdown(wait=False, cancel_futures=True)

    def stop(self) -> None:
        """Stop serving and release the socket; open connections are dropped.

        An answer still being made never leaves: its client sees the connection go.
        """
        self.server.should_exit = True
        if self._loop is not None and not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop ended meanwhile
                self._loop.call_soon_threadsafe(self._close_now)
        if self._thread is None:  # never served: only the bound socket to let go
            self.socket.close()
        elif not threading.current_thread().name.startswith(_THREADS):
            self._thread.join(timeout=5)  # a handler stopping its own server cannot wait

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        await self.server.serve(sockets=[self.socket])

    def _close_now(self) -> None:
        """Stop listening and drop every connection at once.

        uvicorn's own shutdown then finds nothing left to wait for.
        """
        for listener in self.server.servers:
            listener.close()
        for connection in list(self.server.server_state.connections):
            transport = getattr(connection, "transport", None)
            if transport is not None:
                transport.abort()

    async def _app(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        request = Request(
            scope["method"],
            scope["path"],
            {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]},
        )
        response = self.gate(request) if self.gate else None
        if response is None and self._active >= MAX_CONNECTIONS:
            response = self.refusal(503, "busy", f"{MAX_CONNECTIONS} requests in flight")
        self._active += 1
        try:
            if response is None:
                response = await self._answer(request, receive)
            await _send(send, response)
        except ConnectionError:  # the client hung up: nothing to answer, nothing to report
            return
        except asyncio.CancelledError:  # the server is stopping: its connections are gone
            return
        finally:
            self._active -= 1

    async def _answer(self, request: Request, receive: Any) -> Response:
        refused = self._framing(request)
        if refused is not None:
            return refused
        if request.method == "GET" and not _has_body(request.headers):
            return await self._run(request)
        held = [0]  # this request's share of the budget, given back however it ends
        try:
            reading = _read(receive, self.max_body, self._held, held)
            body = await asyncio.wait_for(reading, REQUEST_SECONDS)
            return await self._run(Request(request.method, request.path, request.headers, body))
        except TimeoutError:
            return self.refusal(408, "timeout", "the request body came too slowly")
        except BodyTooLarge:
            return self.refusal(413, "too_large", f"a body over {self.max_body} bytes")
        except OverBudget:
            return self.refusal(503, "busy", "too many request bodies at once; try again")
        finally:
            self._held[0] -= held[0]

    def _framing(self, request: Request) -> Response | None:
        """Refuse a body that is compressed, of no stated length, or says it is too large.

        A declared length over the cap is refused unread; a chunked body is counted as it
        comes (``_read``), so neither framing lets more than the cap in.
        """
        encoding = request.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            message = f"Content-Encoding {encoding!r}; only identity (uncompressed) is read"
            return self.refusal(415, "unsupported", message)
        length = request.headers.get("content-length")
        if length is None:
            if _has_body(request.headers) or request.method == "GET":
                return None
            return self.refusal(411, "malformed", "a Content-Length header is needed")
        if not length.isdigit():
            return self.refusal(411, "malformed", f"Content-Length {length!r} is not a number")
        if int(length) > self.max_body:
            message = f"message of {length} bytes; at most {self.max_body}"
            return self.refusal(413, "too_large", message)
        return None

    async def _run(self, request: Request) -> Response:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, self.handler, request)


class BodyTooLarge(Exception):
    """A body grew past its cap while it was being read."""


class OverBudget(Exception):
    """The bodies held at once would pass ``BODY_BUDGET``."""


async def _read(receive: Any, limit: int, total: list[int], mine: list[int]) -> bytes:
    """Return the whole body, counting its bytes as they come, however it is framed.

    Each piece is counted in ``mine`` and in ``total``, the bytes all requests hold (the
    caller gives ``mine`` back from ``total`` when the request ends).

    Raises:
        BodyTooLarge: more than ``limit`` bytes came; reading stops there (at most one
            piece past the cap is ever held).
        OverBudget: the piece would take ``total`` past ``BODY_BUDGET``.
        ConnectionError: the client went away.
    """
    parts, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ConnectionError("the client went away")
        part = message.get("body", b"")
        size += len(part)
        if size > limit:
            raise BodyTooLarge(size)
        if total[0] + len(part) > BODY_BUDGET:
            raise OverBudget(total[0])
        total[0] += len(part)
        mine[0] += len(part)
        parts.append(part)
        if not message.get("more_body"):
            return b"".join(parts)


def _has_body(headers: Mapping[str, str]) -> bool:
    """Return whether a request announces a body (a length, or a transfer coding)."""
    return "transfer-encoding" in headers or headers.get("content-length", "0") != "0"


async def _send(send: Any, response: Response) -> None:
    headers = [
        (b"content-type", response.content_type.encode()),
        (b"content-length", str(len(response.body)).encode()),
        *((k.lower().encode(), v.encode()) for k, v in response.headers.items()),
    ]
    if response.close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": response.status, "headers": headers})
    await send({"type": "http.response.body", "body": response.body})


def _refusal(status: int, code: str, message: str) -> Response:
    body = json.dumps({"error": code, "message": message}).encode()
    return Response(status, body, close=True)
