"""What a server says it spent on an attempt: tokens, the model it served, and their price.

Read from the body of any attempt, answered or not: a malformed answer or an error body may
still report ``usage``, and those tokens are billed (and counted) as an answer's are. The
model a server names in its answer can differ from the one asked for (an alias such as
``gpt-4o`` served as a dated snapshot, or a router's choice); records keep both.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

PER_TOKENS = 1_000_000
"""Prices are given per million tokens, as the hosted APIs list them."""


@dataclass(frozen=True, slots=True)
class Reported:
    """What one attempt's body reported: prompt and answer tokens, the model named."""

    tokens_in: int = 0
    tokens_out: int = 0
    served: str | None = None

    def __add__(self, other: Reported) -> Reported:
        """Return both attempts' tokens summed, and the later attempt's model name."""
        return Reported(
            self.tokens_in + other.tokens_in,
            self.tokens_out + other.tokens_out,
            other.served or self.served,
        )


def reported(body: str) -> Reported:
    """Return the usage and model name a JSON body reports (nothing, if it is not JSON)."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return Reported()
    if isinstance(data, list) and data:  # Gemini wraps some error bodies in a list
        data = data[0]
    if not isinstance(data, dict):
        return Reported()
    usage = data.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    served = data.get("model")
    return Reported(
        _count(usage.get("prompt_tokens")),
        _count(usage.get("completion_tokens")),
        served if isinstance(served, str) and served else None,
    )


def price(
    tokens_in: int, tokens_out: int, price_in: float | None, price_out: float | None
) -> float | None:
    """Return what the tokens cost at prices per million tokens (None: no prices given)."""
    if price_in is None or price_out is None:
        return None
    return (tokens_in * price_in + tokens_out * price_out) / PER_TOKENS


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def reported_by(error: Exception) -> Reported:
    """Return what the body of a failed attempt's HTTP answer reports (nothing without one)."""
    response = getattr(error, "response", None)
    try:
        return reported(str(response.text)) if response is not None else Reported()
    except Exception:  # a body that cannot be read reports nothing
        return Reported()


class CallClock:
    """One call's time, split: waits before retries, attempts that failed, and the rest.

    ``latency`` is the whole; ``latency - waited - failed_time`` is the answering attempt's.
    """

    def __init__(self) -> None:
        """Start the clock."""
        self.started = self._attempt = time.perf_counter()
        self.waited = 0.0
        self.failed_time = 0.0

    def attempt(self) -> None:
        """Mark the start of an attempt."""
        self._attempt = time.perf_counter()

    def failed(self) -> None:
        """Count the attempt that just ended as failed."""
        self.failed_time += time.perf_counter() - self._attempt

    @contextmanager
    def waiting(self) -> Iterator[None]:
        """Count the block's time as waiting before a retry."""
        before = time.perf_counter()
        try:
            yield
        finally:
            self.waited += time.perf_counter() - before

    @property
    def latency(self) -> float:
        """Return the seconds since the call started."""
        return time.perf_counter() - self.started
