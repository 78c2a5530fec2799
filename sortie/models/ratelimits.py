"""What a 429's body says: how long to wait, and whether waiting can help at all.

Hosted APIs say more in the body of a 429 than in its headers:

- Gemini (its own API and its OpenAI-compatible endpoint) gives the wait as a
  ``google.rpc.RetryInfo`` detail, ``{"@type": ".../google.rpc.RetryInfo", "retryDelay":
  "47s"}``, beside a ``google.rpc.QuotaFailure`` naming the quotas hit (``quotaId``
  ``GenerateRequestsPerMinutePerProjectPerModel``, ``...PerDay...``). The OpenAI-compatible
  endpoint may wrap the body in a list, or put it, as text, in the ``message`` of an
  OpenAI-style error.
- OpenAI says a spent balance with ``"code": "insufficient_quota"`` ("You exceeded your
  current quota, please check your plan and billing details").

A per-minute limit passes: the call is retried after the wait. A spent balance or a daily
quota does not pass within a run: retrying only repeats the refusal, so the call fails at once
with one clear error (``ErrorKind.QUOTA``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"
QUOTA_FAILURE = "type.googleapis.com/google.rpc.QuotaFailure"
SPENT_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached"})
"""OpenAI's error codes (or types) for a balance or budget used up."""
_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*s\s*$")
"""A protobuf Duration in JSON: seconds with an ``s``, fractions allowed (``"1.5s"``)."""


@dataclass(frozen=True, slots=True)
class Limit:
    """What a 429 body says: the wait asked for (seconds), and whether a quota is used up."""

    retry_after: float | None = None
    exhausted: str | None = None
    """Why no retry can help (the quota named), or None for a limit that passes."""


def read_limit(text: str) -> Limit:
    """Return what the 429 body ``text`` says about waiting (nothing, if it is not JSON)."""
    errors = list(_errors(_loads(text)))
    delay = next((d for e in errors for d in [_retry_delay(e)] if d is not None), None)
    exhausted = next((why for e in errors for why in [_exhausted(e)] if why), None)
    return Limit(delay, exhausted)


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _errors(body: Any) -> Iterator[dict[str, Any]]:
    """Yield every error object of a body: a list's, an ``error``'s, one in a message's text."""
    if isinstance(body, list):
        for item in body[:4]:
            yield from _errors(item)
    elif isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            yield error
            message = error.get("message")
            if isinstance(message, str) and message.lstrip().startswith(("{", "[")):
                yield from _errors(_loads(message))


def _details(error: dict[str, Any]) -> list[dict[str, Any]]:
    details = error.get("details")
    return [d for d in details if isinstance(d, dict)] if isinstance(details, list) else []


def _retry_delay(error: dict[str, Any]) -> float | None:
    """Return the seconds of a ``RetryInfo`` detail's ``retryDelay``, if there is one."""
    for detail in _details(error):
        delay = detail.get("retryDelay")
        if detail.get("@type") == RETRY_INFO and isinstance(delay, str):
            matched = _DURATION.match(delay)
            if matched:
                return float(matched.group(1))
    return None


def _exhausted(error: dict[str, Any]) -> str | None:
    """Return why ``error`` is a used-up quota (a balance, a daily quota), or None."""
    for name in ("code", "type"):
        if error.get(name) in SPENT_CODES:
            return f"{error[name]}: the account's quota or balance is used up"
    for detail in _details(error):
        if detail.get("@type") != QUOTA_FAILURE:
            continue
        violations = detail.get("violations")
        for violation in violations if isinstance(violations, list) else []:
            quota = violation.get("quotaId", "") if isinstance(violation, dict) else ""
            if isinstance(quota, str) and "PerDay" in quota:
                return f"daily quota {quota} used up"
    return None
