"""Reading a refused request (an HTTP 4xx, or llama.cpp's 500) for its cause.

A refusal is not always about the response format: the prompt may not fit the server's
context, it may hold more images than the server takes, or the model may refuse a parameter
(OpenAI's reasoning models refuse ``max_tokens`` and any ``temperature`` but 1). Each cause
is handled on its own: a refused format steps down for that kind of request, a refused
parameter is renamed or left out, and a prompt too long or with too many images stops with
one error naming the fix. The phrases come from the servers' own error bodies:

- vLLM: ``This model's maximum context length is 4096 tokens. However, you requested ...``,
  ``At most 1 image(s) may be provided in one prompt.``
- llama.cpp (C++ ``llama-server``): ``request (4476 tokens) exceeds the available context
  size (4096 tokens)`` (type ``exceed_context_size_error``); ``image input is not
  supported``; a refused ``json_schema`` is a 500 naming ``response_format``.
- llama-cpp-python: ``Requested tokens (5000) exceed context window of 2048``, sent as an
  OpenAI-style ``context_length_exceeded`` error.
- OpenAI: codes ``context_length_exceeded``, ``unsupported_parameter`` and
  ``unsupported_value`` with ``param`` naming the field (``max_tokens``: ``Use
  'max_completion_tokens' instead``).
- Gemini's OpenAI-compatible endpoint: ``The input token count (N) exceeds the maximum
  number of tokens allowed (M)``; its bodies are a list of ``{"error": ...}``.
- Anthropic's OpenAI-compatible endpoint: ``prompt is too long: N tokens > M maximum``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Cause(StrEnum):
    """Why a server refused a request."""

    FORMAT = "format"  # the response format (json_schema, json_object, a grammar)
    CONTEXT = "context"  # the prompt (with the answer's tokens) does not fit the context
    IMAGES = "images"  # more images than the server takes, or none taken at all
    PARAMETER = "parameter"  # a request field the model refuses (max_tokens, temperature)
    OTHER = "other"  # none of these: the server's words are shown as they are


_CONTEXT = re.compile(
    r"context_length_exceeded|exceed_context_size_error|maximum context length|"
    r"exceeds? the available context size|exceed context window|prompt is too long|"
    r"input token count .* exceeds|too many tokens|input is too long",
    re.IGNORECASE | re.DOTALL,
)
_IMAGES = re.compile(
    r"at most \d+ image|too many images|image input is not supported|"
    r"maximum of \d+ images|does not support (image|vision)|missing data required for image",
    re.IGNORECASE,
)
_FORMAT = re.compile(
    r"response_format|json_schema|json_object|grammar|guided_json|guided decoding|xgrammar",
    re.IGNORECASE,
)
_PARAM_CODES = frozenset({"unsupported_parameter", "unsupported_value"})
_QUOTED = re.compile(r"'([a-z_]+)'")


@dataclass(frozen=True, slots=True)
class Refusal:
    """A refused request read for its cause: the cause, the field named, the server's words."""

    cause: Cause
    param: str | None = None
    """The request field refused (for ``PARAMETER``)."""
    message: str = ""


def read_refusal(body: Any, text: str, sent: frozenset[str] = frozenset()) -> Refusal:
    """Return why a server refused a request, from its error ``body`` and message ``text``.

    Args:
        body: the decoded error body (OpenAI's ``{"error": {...}}``, Gemini's list of them,
            or anything else a server sends).
        text: the error as the SDK words it (status and message).
        sent: the request's fields, so a parameter is only blamed if it was sent.
    """
    error = _error_object(body)
    message = str(error.get("message") or text)
    code = str(error.get("code") or "") + " " + str(error.get("type") or "")
    said = f"{code} {message} {text}"
    if _CONTEXT.search(said):
        return Refusal(Cause.CONTEXT, message=message)
    if _IMAGES.search(said):
        return Refusal(Cause.IMAGES, message=message)
    param = _refused_param(error, message, sent)
    if param is not None:
        return Refusal(Cause.PARAMETER, param, message)
    if _FORMAT.search(said):
        return Refusal(Cause.FORMAT, message=message)
    return Refusal(Cause.OTHER, message=message)


NOT_REFUSALS = frozenset({401, 403, 404, 408, 409, 429})
"""Statuses that are never a refusal of the request's content: a key, a model name, a wait."""


def refusal_of(error: Exception, request: dict[str, Any]) -> Refusal | None:
    """Return why a server refused ``request``, or None if ``error`` is no refusal.

    A 4xx is a refusal (bar the statuses of ``NOT_REFUSALS``); a 5xx only when it names a
    cause (llama.cpp answers a refused ``json_schema`` or an image with a 500), else it is
    a server failure worth another attempt. A refused format counts only if one was sent.
    """
    import openai  # here, not at the top: the classifying needs no SDK

    if not isinstance(error, openai.APIStatusError) or error.status_code in NOT_REFUSALS:
        return None
    refusal = read_refusal(error.body, str(error), frozenset(request))
    if refusal.cause is Cause.FORMAT and "response_format" not in request:
        refusal = Refusal(Cause.OTHER, message=refusal.message)
    if error.status_code >= 500 and refusal.cause is Cause.OTHER:
        return None
    return refusal


def _error_object(body: Any) -> dict[str, Any]:
    """Return the ``error`` object of a body (Gemini wraps it in a list), or an empty dict."""
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except (ValueError, RecursionError):
            return {}
    if isinstance(body, list) and body:
        body = body[0]
    if isinstance(body, dict):
        inner = body.get("error", body)
        return inner if isinstance(inner, dict) else {"message": str(inner)}
    return {}


def _refused_param(error: dict[str, Any], message: str, sent: frozenset[str]) -> str | None:
    """Return the sent field a server refused, if it says which (OpenAI's ``param``)."""
    param = error.get("param")
    code = str(error.get("code") or "")
    named = isinstance(param, str) and param in sent
    if named and (code in _PARAM_CODES or "nsupported" in message):
        return str(param)
    if "nsupported parameter" in message or "nsupported value" in message:
        quoted = [name for name in _QUOTED.findall(message) if name in sent]
        return quoted[0] if quoted else None
    return None


def context_fix(message: str) -> str:
    """Return the error for a prompt longer than the server's context, naming the fixes."""
    return (
        f"the prompt does not fit the server's context ({message[:200]}); serve the model "
        f"with a longer context (llama.cpp: -c N; llama-cpp-python: --n_ctx N; vLLM: "
        f"--max-model-len N; Ollama: options num_ctx), or send less: -a max_tokens, a "
        f"lower -a resolution, a shorter -a history"
    )


def images_fix(message: str) -> str:
    """Return the error for a request with more images than the server takes, naming the fixes."""
    return (
        f"the server refused the request's images ({message[:200]}); serve a vision model "
        f"that takes them (llama.cpp: --mmproj FILE; vLLM: --limit-mm-per-prompt "
        f"'{{\"image\": 2}}'), or send none: -a observation=text"
    )
