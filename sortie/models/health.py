"""Waiting, after a time-out, until a model server on this machine is free again.

A client time-out does not stop the server. A local server (llama.cpp, ``transformers serve``
on a CPU) goes on computing the abandoned answer, one request at a time, and a retry sent at
once queues behind it: its time-out runs while it waits, so it times out too, and each such
retry leaves one more abandoned answer in the queue. So after a time-out, a client of a
server on the loopback interface retries only once the server passes its health check:

1. ``GET /health`` (llama.cpp and ``transformers serve`` have it) answers 2xx. A 5xx (model
   still loading, worker dead) or no answer in time is asked again; a refused connection (no
   server there any more) ends the wait at once; a server without the route (404) goes on to
   step 2.
2. A one-token chat request is answered. It queues behind the abandoned answer, so it
   returns when the server is free; its time-out is what is left of the wait.

A remote server (a hosted API, many replicas behind a balancer) is retried after the backoff
alone: its queue is not ours to wait for.
"""

from __future__ import annotations

import ipaddress
import time
import urllib.error
import urllib.request
from urllib.parse import urlsplit, urlunsplit

import openai

from sortie.models.config import ModelConfig
from sortie.models.deadline import whole_answer

POLL = 0.5
"""Seconds between two health asks of a server that is not ready."""
ASK_TIMEOUT = 5.0
"""Seconds one ``GET /health`` may take."""
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))
"""Asks the server itself: a proxy set in the environment has no say over loopback."""
_NO_ROUTE = frozenset({401, 403, 404, 405})
"""Statuses that mean the server has no health route open to us: step 2 decides."""


class Unhealthy(Exception):
    """The server did not pass its health check in the time allowed; says what it answered."""


def is_local(base_url: str) -> bool:
    """Return whether ``base_url`` names this machine (localhost or a loopback address)."""
    host = urlsplit(base_url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def health_url(base_url: str) -> str:
    """Return the health route of the server at ``base_url`` (beside its ``/v1``)."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/").removesuffix("/v1")
    return urlunsplit(parts._replace(path=f"{path}/health", query="", fragment=""))


def wait_until_healthy(sdk: openai.OpenAI, config: ModelConfig, budget: float) -> None:
    """Return once the server passes both steps of its health check.

    Raises:
        Unhealthy: it did not within ``budget`` seconds (the message says what it answered).
    """
    deadline = time.monotonic() + budget
    _wait_for_route(health_url(config.base_url), deadline)
    _wait_for_answer(sdk, config, deadline)


def _wait_for_route(url: str, deadline: float) -> None:
    """Step 1: return once ``url`` answers 2xx, or shows there is no such route."""
    while True:
        status = _status(url, _left(deadline, ASK_TIMEOUT))
        if status is not None and (status < 300 or status in _NO_ROUTE):
            return
        _pause(deadline, f"GET {url} answered {status or 'nothing'}")


def _status(url: str, timeout: float) -> int | None:
    """Return the HTTP status of ``GET url``, or None if nothing answered in ``timeout``.

    Raises:
        Unhealthy: the connection was refused: no server runs there any more.
    """
    try:
        with _DIRECT.open(url, timeout=timeout) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return error.code
    except urllib.error.URLError as error:
        if isinstance(error.reason, ConnectionRefusedError):
            raise Unhealthy(f"GET {url}: connection refused; the server is not running") from None
        return None
    except (OSError, ValueError):
        return None


def _wait_for_answer(sdk: openai.OpenAI, config: ModelConfig, deadline: float) -> None:
    """Step 2: return once a one-token chat request is answered (a refusal is an answer)."""
    while True:
        try:
            with whole_answer(_left(deadline)):
                sdk.chat.completions.create(
                    model=config.model,
                    max_tokens=1,
                    messages=[{"role": "user", "content": "Say OK."}],
                    timeout=_left(deadline),
                )
            return
        except openai.APITimeoutError:
            raise Unhealthy("a one-token request was still waiting for its answer") from None
        except openai.APIConnectionError:
            raise Unhealthy("the server dropped a one-token request's connection") from None
        except (openai.InternalServerError, openai.RateLimitError):
            pass  # busy: ask again
        except (openai.APIError, ValueError):
            return  # it answered, if not as the SDK expects
        _pause(deadline, "a one-token request got no answer")


def _left(deadline: float, most: float | None = None) -> float:
    """Return the seconds left before ``deadline`` (at least a little), capped at ``most``."""
    left = max(0.05, deadline - time.monotonic())
    return left if most is None else min(left, most)


def _pause(deadline: float, why: str) -> None:
    """Sleep before the next ask, or raise Unhealthy with ``why`` if the time is up."""
    if time.monotonic() + POLL >= deadline:
        raise Unhealthy(why)
    time.sleep(POLL)
