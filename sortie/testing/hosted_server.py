"""A hosted API's billing and rate-limit habits on the local test server, for the client's tests.

``HostedServer`` is a ``ModelServer`` that can also answer with queued raw replies (a 429 whose
body says how long to wait or that the quota is spent, in the formats Gemini's and OpenAI's
endpoints use), and name another model in its answers than the one asked for (an alias
served as a dated snapshot)::

    with HostedServer(policy, served="gpt-4o-2024-08-06") as server:
        server.reply(429, gemini_limit("2s"))
        ...  # the client waits 2 s (no Retry-After header), then is answered
"""

from __future__ import annotations

import json
from collections import deque
from http.server import BaseHTTPRequestHandler
from typing import Any

from sortie.testing.model_server import ModelServer, Policy, _Handler

GOOGLE_RPC = "type.googleapis.com/google.rpc."


def gemini_limit(delay: str, quota: str = "GenerateRequestsPerMinutePerProjectPerModel") -> Any:
    """Return Gemini's 429 body (its OpenAI-compatible endpoint wraps it in a list)."""
    return [
        {
            "error": {
                "code": 429,
                "message": "You exceeded your current quota, please check your plan and "
                "billing details.",
                "status": "RESOURCE_EXHAUSTED",
                "details": [
                    {
                        "@type": GOOGLE_RPC + "QuotaFailure",
                        "violations": [
                            {
                                "quotaMetric": "generativelanguage.googleapis.com/"
                                "generate_content_free_tier_requests",
                                "quotaId": quota,
                            }
                        ],
                    },
                    {"@type": GOOGLE_RPC + "Help", "links": []},
                    {"@type": GOOGLE_RPC + "RetryInfo", "retryDelay": delay},
                ],
            }
        }
    ]


def openai_spent() -> dict[str, Any]:
    """Return OpenAI's 429 body for a balance used up (retrying cannot help)."""
    return {
        "error": {
            "message": "You exceeded your current quota, please check your plan and billing "
            "details.",
            "type": "insufficient_quota",
            "param": None,
            "code": "insufficient_quota",
        }
    }


class HostedServer(ModelServer):
    """A ``ModelServer`` that also sends queued raw replies and names the model it served."""

    def __init__(self, policy: Policy, *, served: str | None = None, **options: Any) -> None:
        """Serve ``policy``'s answers (``options`` as ``ModelServer``'s).

        Args:
            policy: maps the request's messages to the answer text.
            served: the model named in every answer (None: the one asked for).
            **options: ``ModelServer``'s keyword arguments.
        """
        super().__init__(policy, **options)
        self.served = served
        self._replies: deque[tuple[int, Any, dict[str, str]]] = deque()

    def reply(
        self, status: int, body: Any, headers: dict[str, str] | None = None, times: int = 1
    ) -> None:
        """Answer the next ``times`` chat requests with ``status`` and the JSON ``body``."""
        with self._lock:
            self._replies.extend([(status, body, headers or {})] * times)

    def next_reply(self) -> tuple[int, Any, dict[str, str]] | None:
        """Return the next queued raw reply, if any (used up)."""
        with self._lock:
            return self._replies.popleft() if self._replies else None

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        """Return the handler that answers the queued replies first."""
        return _HostedHandler


class _HostedHandler(_Handler):
    server_double: HostedServer

    def _answer(self) -> None:
        scripted = self.server_double.next_reply()
        if scripted is None:
            return super()._answer()
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with self.server_double._lock:
            self.server_double.requests.append(json.loads(raw))
        status, body, headers = scripted
        self._send_bytes(status, json.dumps(body).encode(), headers=headers)

    def _send(
        self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        served = self.server_double.served
        if served is not None and "choices" in payload:
            payload = {**payload, "model": served}
        super()._send(status, payload, headers)
