"""A local OpenAI-compatible chat server: a test double for the model client and agents.

It is a test double, not a model: it serves ``POST /v1/chat/completions`` over real HTTP on
127.0.0.1 (an ephemeral port, stdlib ``http.server`` in a thread) and answers from a scripted
policy, a callable from the request's messages to the answer text. Faults can be queued to
check the client's retries and fallbacks; every request is kept so tests can count them::

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
from typing import Any

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


@dataclass(frozen=True, slots=True)
class Injected:
    """One queued fault with its parameters."""

    fault: Fault
    delay: float = 0.0
    retry_after: float = 0.0


class ModelServer:
    """An OpenAI-compatible chat completions server on 127.0.0.1, for tests."""

    def __init__(self, policy: Policy, reject_json_schema: bool = False,
                 reject_json_mode: bool = False) -> None:
        """Serve ``policy``'s answers.

        Args:
            policy: maps the request's messages to the answer text.
            reject_json_schema: answer 400 to ``response_format`` of type ``json_schema``, as
                servers without structured output do.
            reject_json_mode: answer 400 to ``response_format`` of type ``json_object`` too.
        """
        self.policy = policy
        self.reject_json_schema, self.reject_json_mode = reject_json_schema, reject_json_mode
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.in_flight = self.max_in_flight = 0
        """Requests being answered now, and the most seen at once (to check a concurrency cap)."""
        self._faults: deque[Injected] = deque()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- control ------------------------------------------------------------------------
    def inject(self, fault: Fault, times: int = 1, delay: float = 0.0,
               retry_after: float = 0.0) -> None:
        """Queue ``fault`` for the next ``times`` requests (after those already queued)."""
        with self._lock:
            self._faults.extend([Injected(fault, delay, retry_after)] * times)

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

    def start(self) -> ModelServer:
        """Start serving in a daemon thread on an ephemeral port."""
        handler = type("Handler", (_Handler,), {"server_double": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,),
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ModelServer:
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
            kind == "json_object" and self.reject_json_mode)


def completion(text: str, body: dict[str, Any]) -> dict[str, Any]:
    """Return a chat completion answering ``text``, with deterministic token counts."""
    return {
        "id": "chatcmpl-test", "object": "chat.completion", "created": 0,
        "model": body.get("model", "test"),
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": len(json.dumps(body.get("messages", []))) // 4,
                  "completion_tokens": len(text) // 4 + 1,
                  "total_tokens": len(json.dumps(body.get("messages", []))) // 4
                  + len(text) // 4 + 1},
    }  # fmt: skip


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

    def do_POST(self) -> None:  # noqa: N802 - stdlib's name
        """Answer one chat completion request, or misbehave as queued."""
        double = self.server_double
        with double._lock:
            double.in_flight += 1
            double.max_in_flight = max(double.max_in_flight, double.in_flight)
        try:
            self._answer()
        finally:
            with double._lock:
                double.in_flight -= 1

    def _answer(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if not self.path.endswith("/chat/completions"):
            return self._send(404, {"error": {"message": f"no route {self.path}"}})
        body = json.loads(raw)
        double = self.server_double
        fault = double._take(body, {k.lower(): v for k, v in self.headers.items()})
        if double._rejects(body):
            return self._send(400, {"error": {"message": "response_format not supported",
                                              "type": "invalid_request_error"}})  # fmt: skip
        if fault is None:
            return self._send(200, completion(double.policy(body["messages"]), body))
        self._misbehave(fault, body)

    def _misbehave(self, fault: Injected, body: dict[str, Any]) -> None:
        if fault.fault is Fault.LATENCY:
            time.sleep(fault.delay)
            self._send(200, completion(self.server_double.policy(body["messages"]), body))
        elif fault.fault is Fault.RATE_LIMIT:
            self._send(429, {"error": {"message": "rate limited"}},
                       {"Retry-After": f"{fault.retry_after:g}"})
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
        else:
            self._send(200, completion('{"unexpected": "field"}', body))

    def _send(self, status: int, payload: dict[str, Any],
              headers: dict[str, str] | None = None) -> None:
        self._send_bytes(status, json.dumps(payload).encode(), headers=headers)

    def _send_bytes(self, status: int, data: bytes, length: int | None = None,
                    headers: dict[str, str] | None = None) -> None:
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
