"""A local OpenAI-compatible chat server: a test double for the model client and agents.

It is a test double, not a model: it serves ``POST /v1/chat/completions`` (and, when given a
model list, ``GET /v1/models``) over real HTTP on 127.0.0.1 (an ephemeral port, stdlib
``http.server`` in a thread) and answers from a scripted policy, a callable from the
request's messages to the answer text. Faults can be queued to check the client's retries
and fallbacks; every chat request is kept so tests can count them::

    with ModelServer(lambda messages: '{"command": "forward"}') as server:
        server.inject(Fault.RATE_LIMIT, times=2, retry_after=0.01)
        ...  # point a client at server.base_url
        assert server.count == 3
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from sortie.testing.server_quirks import Quirks, refusal, shaped

Policy = Callable[[list[dict[str, Any]]], str]
"""Maps a request's messages to the answer text."""


class Fault(StrEnum):
    """What the server can do instead of (or besides) answering normally."""

    LATENCY = "latency"  # answer normally after ``delay`` seconds
    RATE_LIMIT = "rate_limit"  # 429 with a Retry-After header
    SERVER_ERROR = "server_error"  # 500
    RESET = "reset"  # close the connection with a TCP reset, no answer
    MALFORMED = "malformed"  # 200 with a body that is not JSON
    TRUNCATED = "truncated"  # 200 whose body stops half way (Content-Length says more)
    HUGE = "huge"  # 200 with a valid answer of about 1 MB of text
    VIOLATE = "violate"  # 200 with an answer that is JSON but breaks the schema
    CHOICES_NOT_LIST = "choices_not_list"  # 200 whose "choices" is a string
    CONTENT_NOT_TEXT = "content_not_text"  # 200 whose message content is a number
    NO_CHOICES = "no_choices"  # 200 without "choices"
    NO_MESSAGE = "no_message"  # 200 whose first choice has no message
    DEEP = "deep"  # 200 whose JSON nests 100,000 levels deep


_SHAPES: dict[Fault, Callable[[dict[str, Any]], bytes]] = {
    Fault.CHOICES_NOT_LIST: lambda c: json.dumps({**c, "choices": "oops"}).encode(),
    Fault.CONTENT_NOT_TEXT: lambda c: json.dumps(
        {**c, "choices": [{"index": 0, "message": {"role": "assistant", "content": 42}}]}
    ).encode(),
    Fault.NO_CHOICES: lambda c: json.dumps({k: v for k, v in c.items() if k != "choices"}).encode(),
    Fault.NO_MESSAGE: lambda c: json.dumps({**c, "choices": [{"index": 0}]}).encode(),
    Fault.DEEP: lambda c: b'{"choices": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
}
"""Bodies of the right JSON syntax but the wrong shape, made from a proper completion."""
_REFUSALS = {
    500: (
        'response_format type must be one of "text" or "json_object", but got: {kind}',
        "server_error",
    )
}
"""The refusal a server answers with, by status (500: llama.cpp's words); else OpenAI's."""


@dataclass(frozen=True, slots=True)
class Injected:
    """One queued fault with its parameters."""

    fault: Fault
    delay: float = 0.0
    retry_after: float = 0.0


class ModelServer:
    """An OpenAI-compatible chat completions server on 127.0.0.1, for tests."""

    def __init__(
        self,
        policy: Policy,
        reject_json_schema: bool = False,
        reject_json_mode: bool = False,
        *,
        refusal_status: int = 400,
        models: tuple[str, ...] | None = None,
        any_model: bool = False,
        echo_key: bool = False,
        key: str | None = None,
        routes: str = "",
        drops_system: bool = False,
        serial: bool = False,
        health: bool = False,
        quirks: Quirks | None = None,
    ) -> None:
        """Serve ``policy``'s answers.

        Args:
            policy: maps the request's messages to the answer text.
            reject_json_schema: refuse ``response_format`` of type ``json_schema``, as
                servers without structured output do.
            reject_json_mode: refuse ``response_format`` of type ``json_object`` too.
            refusal_status: the HTTP status of a refusal: 400 as most servers, 500 with
                llama.cpp's message, or another (422...).
            models: the models served, listed at ``GET /v1/models``; a chat request for
                another gets a 404. None: no ``/models`` route, and any model name answered.
            any_model: answer any model name even though ``models`` lists others (llama.cpp).
            echo_key: add the key of the request's Authorization header to every answer and
                error message, as a careless server or proxy might.
            key: the only API key accepted; other keys get a 401 (None: any key).
            routes: the only path prefix served (``"/v1"``: as llama.cpp, a request for
                ``/models`` or ``/chat/completions`` without it is a 404); empty: any prefix.
            drops_system: count the prompt's tokens without its system messages, as a chat
                template that drops them does (llama.cpp's ``gemma``).
            serial: answer one chat request at a time, as a CPU server with one slot does:
                a request waits for the one before, even one whose client has given up.
            health: serve ``GET /health`` (200 at once, as llama.cpp and transformers serve
                do even while busy; 503 while ``sick`` answers are queued).
            quirks: play one kind of real server (``sortie.testing.server_quirks.QUIRKS``):
                its error bodies, the content it drops, its token counts, its template.
        """
        self.policy = policy
        self.reject_json_schema, self.reject_json_mode = reject_json_schema, reject_json_mode
        self.refusal_status, self.models, self.any_model = refusal_status, models, any_model
        self.echo_key, self.key, self.routes = echo_key, key, routes
        self.drops_system, self.health, self.quirks = drops_system, health, quirks
        self.health_checks = 0
        """``GET /health`` requests answered."""
        self._sick = 0
        self._serial = threading.Lock() if serial else None
        self.listings = 0
        """``GET /models`` requests answered (they are not in ``requests``)."""
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.in_flight = self.max_in_flight = 0
        """Requests being answered now, and the most seen at once (to check a concurrency cap).

        A request counts from its arrival until its answer starts to be written: a client can
        send its next request only after that, so a busy machine (the handler's thread not yet
        back) cannot make one client's turn look like two."""
        self._faults: deque[Injected] = deque()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- control ------------------------------------------------------------------------
    def inject(
        self, fault: Fault, times: int = 1, delay: float = 0.0, retry_after: float = 0.0
    ) -> None:
        """Queue ``fault`` for the next ``times`` requests (after those already queued)."""
        with self._lock:
            self._faults.extend([Injected(fault, delay, retry_after)] * times)

    def sick(self, times: int) -> None:
        """Answer the next ``times`` health checks with a 503 (a model still loading)."""
        with self._lock:
            self._sick += times

    @property
    def count(self) -> int:
        """Return how many chat requests arrived so far."""
        with self._lock:
            return len(self.requests)

    @property
    def base_url(self) -> str:
        """Return the base URL to give a client (``http://127.0.0.1:<port>/v1``)."""
        if self._httpd is None:
            raise RuntimeError("ModelServer is not running; use it as a context manager")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        """Return the request handler this double serves with (a subclass may answer more)."""
        return _Handler

    def start(self) -> Self:
        """Start serving in a daemon thread on an ephemeral port."""
        handler = type("Handler", (self.handler_class(),), {"server_double": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- answering ----------------------------------------------------------------------
    def _take(self, body: dict[str, Any], headers: dict[str, str]) -> Injected | None:
        """Count the request; return the next queued fault (none is used up by a refusal)."""
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            if self._rejects(body) or not self._faults:
                return None
            return self._faults.popleft()

    def _rejects(self, body: dict[str, Any]) -> bool:
        kind = (body.get("response_format") or {}).get("type")
        return (kind == "json_schema" and self.reject_json_schema) or (
            kind == "json_object" and self.reject_json_mode
        )

    def _refusal(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Return the status and body refusing ``body``'s response format."""
        kind = body["response_format"]["type"]
        message, type_ = _REFUSALS.get(
            self.refusal_status, ("response_format {kind} not supported", "invalid_request_error")
        )
        return self.refusal_status, {
            "error": {
                "code": self.refusal_status,
                "type": type_,
                "message": message.format(kind=kind),
            }
        }

    def health_answer(self) -> tuple[int, dict[str, Any]]:
        """Count a health check; return its status and body."""
        with self._lock:
            self.health_checks += 1
            sick, self._sick = self._sick > 0, max(0, self._sick - 1)
        if sick:
            return 503, {"error": {"code": 503, "message": "Loading model"}}
        return 200, {"status": "ok"}

    def told_template(self) -> str | None:
        """Return the chat template the double's kind of server tells (None: none)."""
        return self.quirks.template if self.quirks is not None else None

    def previous(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """Return the chat request answered before ``body``, if any (a prompt cache's)."""
        with self._lock:
            at = next((i for i, b in enumerate(self.requests) if b is body), 0)
            return self.requests[at - 1] if at > 0 else None

    def _knows(self, model: str) -> bool:
        return self.models is None or self.any_model or model in self.models

    def model_list(self) -> dict[str, Any]:
        """Return the ``GET /v1/models`` body listing ``models``."""
        return {
            "object": "list",
            "data": [
                {"id": name, "object": "model", "created": 0, "owned_by": "test"}
                for name in self.models or ()
            ],
        }


def completion(text: str, body: dict[str, Any]) -> dict[str, Any]:
    """Return a chat completion answering ``text``, with deterministic token counts."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "test"),
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
        ],
        "usage": {
            "prompt_tokens": len(json.dumps(body.get("messages", []))) // 4,
            "completion_tokens": len(text) // 4 + 1,
            "total_tokens": len(json.dumps(body.get("messages", []))) // 4 + len(text) // 4 + 1,
        },
    }


class _Handler(BaseHTTPRequestHandler):
    server_double: ModelServer
    protocol_version = "HTTP/1.1"
    wbufsize = -1  # buffered: headers and body leave in one segment (no delayed-ACK stalls)

    def setup(self) -> None:
        """Send small answers at once (no Nagle delay)."""
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib's name
        """Keep test output quiet."""

    def do_GET(self) -> None:  # noqa: N802 - stdlib's name
        """List the models served, if the double was given a list (else 404, as some do)."""
        double = self.server_double
        if double.health and self.path == "/health":
            return self._send(*double.health_answer())
        if self._template_asked("/props"):
            return self._send(200, {"chat_template": double.told_template()})
        if not self._authorised():
            return self._send(401, {"error": {"message": "Incorrect API key provided"}})
        if not self._routed("/models") or double.models is None:
            return self._send(404, {"error": {"message": f"no route {self.path}"}})
        with double._lock:
            double.listings += 1
        self._send(200, double.model_list())

    def do_POST(self) -> None:  # noqa: N802 - stdlib's name
        """Answer one chat completion request, or misbehave as queued."""
        double = self.server_double
        with double._lock:
            double.in_flight += 1
            double.max_in_flight = max(double.max_in_flight, double.in_flight)
        self._counted = True
        try:
            if double._serial is None:
                self._answer()
            else:
                with double._serial:
                    self._answer()
        finally:
            self._answered()

    def _answered(self) -> None:
        """Count this request out of those in flight, once (its answer is being written)."""
        if getattr(self, "_counted", False):
            with self.server_double._lock:
                self.server_double.in_flight -= 1
            self._counted = False

    def _answer(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self._template_asked("/api/show"):
            return self._send(200, {"template": self.server_double.told_template()})
        if not self._routed("/chat/completions"):
            return self._send(404, {"error": {"message": f"no route {self.path}"}})
        body = json.loads(raw)
        double = self.server_double
        fault = double._take(body, {k.lower(): v for k, v in self.headers.items()})
        if not self._authorised():
            return self._send(401, {"error": {"message": "Incorrect API key provided"}})
        if not double._knows(body.get("model", "")):
            return self._send(
                404,
                {
                    "error": {
                        "message": f"The model `{body.get('model')}` does not exist",
                        "code": "model_not_found",
                        "type": "invalid_request_error",
                    }
                },
            )
        refused = refusal(double.quirks, body) if double.quirks is not None else None
        if refused is not None:
            return self._send_bytes(refused[0], json.dumps(refused[1]).encode())
        if double._rejects(body):
            return self._send(*double._refusal(body))
        if fault is None:
            counted = body
            if double.drops_system:
                kept = [m for m in body.get("messages", []) if m.get("role") != "system"]
                counted = {**body, "messages": kept}
            answer = completion(self._said(body), counted)
            if double.quirks is not None:
                answer = shaped(double.quirks, answer, body, double.previous(body))
            return self._send(200, answer)
        self._misbehave(fault, body)

    def _template_asked(self, route: str) -> bool:
        """Return whether this asks the chat template where the double's kind tells it."""
        quirks = self.server_double.quirks
        return quirks is not None and quirks.template_route == route and self.path == route

    def _routed(self, route: str) -> bool:
        prefix = self.server_double.routes
        return self.path == prefix + route if prefix else self.path.endswith(route)

    def _authorised(self) -> bool:
        key = self.server_double.key
        return key is None or self.headers.get("Authorization") == f"Bearer {key}"

    def _said(self, body: dict[str, Any]) -> str:
        """Return the policy's answer, with the caller's key added if the double echoes it."""
        return self._echoed(self.server_double.policy(body["messages"]))

    def _echoed(self, text: str) -> str:
        if not self.server_double.echo_key:
            return text
        key = self.headers.get("Authorization", "").removeprefix("Bearer ")
        return f"{text} (your key: {key})"

    def _misbehave(self, fault: Injected, body: dict[str, Any]) -> None:
        if fault.fault is Fault.LATENCY:
            time.sleep(fault.delay)
            self._send(200, completion(self._said(body), body))
        elif fault.fault is Fault.RATE_LIMIT:
            self._send(
                429,
                {"error": {"message": "rate limited"}},
                {"Retry-After": f"{fault.retry_after:g}"},
            )
        elif fault.fault is Fault.SERVER_ERROR:
            self._send(500, {"error": {"message": "internal error"}})
        elif fault.fault is Fault.RESET:
            self._reset()
        elif fault.fault is Fault.MALFORMED:
            self._send_bytes(200, b'{"id": "chatcmpl-test", "choices": [{"mess')
        elif fault.fault is Fault.TRUNCATED:
            data = json.dumps(completion("{}", body)).encode()
            self._send_bytes(200, data[: len(data) // 2], length=len(data))
            self._reset()
        elif fault.fault is Fault.HUGE:
            self._send(200, completion("x" * 1_000_000, body))
        elif fault.fault in _SHAPES:
            self._send_bytes(200, _SHAPES[fault.fault](completion(self._said(body), body)))
        else:
            self._send(200, completion('{"unexpected": "field"}', body))

    def _send(
        self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        error = payload.get("error")
        if isinstance(error, dict) and "message" in error:
            payload = {**payload, "error": {**error, "message": self._echoed(error["message"])}}
        self._send_bytes(status, json.dumps(payload).encode(), headers=headers)

    def _send_bytes(
        self,
        status: int,
        data: bytes,
        length: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self._answered()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data) if length is None else length))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _reset(self) -> None:
        """Close the socket with RST (SO_LINGER 0), as a crashed or overloaded server does."""
        self.wfile.flush()
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        self.close_connection = True

    def finish(self) -> None:
        """Flush what is left, ignoring a socket the handler already reset."""
        try:
            super().finish()
        except OSError:
            pass
