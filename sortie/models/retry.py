"""Which failures of a model call are worth another attempt, and how long to wait first."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from sortie.models.ratelimits import read_limit


class ErrorKind:
    """Kinds of failure, as ``ModelCallRecord.error`` and the accounting name them."""

    RATE_LIMIT = "rate_limit"
    QUOTA = "quota"  # a 429 for a balance or daily quota used up: waiting cannot help
    SERVER = "server"
    TIMEOUT = "timeout"
    CONNECTION = "connection"
    MALFORMED = "malformed"  # a 200 whose body is not JSON (garbled or cut in transit)
    REJECTED = "rejected"  # the response format refused (4xx/5xx): the next format is tried
    CLIENT = "client"  # other 4xx: wrong model name, bad key; retrying cannot help
    FORMAT = "format"  # an answer that does not parse or validate, or JSON of the wrong shape
    ECHO = "echo"  # an answer that copies the prompt's placeholders or field descriptions
    TRANSIENT = frozenset({RATE_LIMIT, SERVER, TIMEOUT, CONNECTION, MALFORMED})


@dataclass(frozen=True, slots=True)
class Failure:
    """One failed HTTP attempt: its kind, the server's wait request, a short description."""

    kind: str
    retry_after: float | None = None
    detail: str = ""


def classify(error: Exception) -> Failure:
    """Return what kind of failure ``error`` (raised by the openai SDK) is."""
    import openai  # here, not at the top: reading ErrorKind (reports) needs no SDK

    if isinstance(error, openai.APITimeoutError):
        return Failure(ErrorKind.TIMEOUT, detail="request timed out")
    if isinstance(error, openai.APIConnectionError):
        return Failure(ErrorKind.CONNECTION, detail="connection failed")
    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        detail = f"HTTP {status}: {str(error)[:300]}"
        if status == 429:
            return _rate_limited(error.response, detail)
        if status >= 500:
            return Failure(ErrorKind.SERVER, retry_after(error.response.headers), detail)
        return Failure(ErrorKind.REJECTED if status == 400 else ErrorKind.CLIENT, None, detail)
    return Failure(ErrorKind.MALFORMED, detail=f"{type(error).__name__}: {str(error)[:300]}")


def _rate_limited(response: Any, detail: str) -> Failure:
    """Return a 429's failure: a quota used up, or a limit to wait for (header, else body)."""
    limit = read_limit(_text(response))
    if limit.exhausted:
        return Failure(ErrorKind.QUOTA, None, f"{limit.exhausted}; {detail}")
    wait = retry_after(response.headers)
    return Failure(ErrorKind.RATE_LIMIT, limit.retry_after if wait is None else wait, detail)


def _text(response: Any) -> str:
    """Return an error response's body as text ("" if it cannot be read)."""
    try:
        return str(response.text)
    except Exception:  # a body that cannot be read says nothing
        return ""


_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "grammar")
"""Words of an error message that mean the server refused the response format."""


def refuses_format(error: Exception) -> bool:
    """Return whether ``error`` is an HTTP answer refusing the request's response format.

    A 400 always counts (the usual answer). Other 4xx and 5xx count when their message names
    the format: llama.cpp answers ``json_schema`` with a 500, others with a 422. Rate limits
    and refused keys never count.
    """
    import openai

    if not isinstance(error, openai.APIStatusError) or error.status_code in (401, 403, 429):
        return False
    if error.status_code == 400:
        return True
    said = f"{error} {str(error.body)[:2000]}".lower()
    return any(word in said for word in _FORMAT_WORDS)


def retry_after(headers: object) -> float | None:
    """Return the wait a server asked for in ``Retry-After`` or ``Retry-After-Ms``, seconds.

    Fractions are accepted (some servers send them); an HTTP date is not (rare for APIs).
    """
    get = getattr(headers, "get", None)
    if get is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = get(name)
        try:
            if value is not None:
                return max(0.0, float(value) * scale)
        except ValueError:
            continue
    return None


class Backoff:
    """Waits before retries: exponential with jitter, at least what the server asked.

    The jitter comes from a generator seeded per client, so the waits of a run repeat; they
    spread the retries of concurrent workers without making tests depend on luck.
    """

    def __init__(self, first: float, longest: float, retry_after_max: float, seed: int = 0) -> None:
        """Start at ``first`` seconds, double up to ``longest``; obey Retry-After up to a cap."""
        self.first, self.longest, self.retry_after_max = first, longest, retry_after_max
        self._rng = random.Random(seed)

    def wait(self, retry: int, failure: Failure) -> float:
        """Return the seconds to wait before retry number ``retry`` (1 for the first)."""
        exponential = min(self.longest, self.first * 2 ** (retry - 1))
        jittered = exponential * (0.5 + 0.5 * self._rng.random())
        if failure.retry_after is None:
            return jittered
        return max(min(failure.retry_after, self.retry_after_max), jittered)
