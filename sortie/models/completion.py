"""Reading a chat completion body without trusting its shape.

A server that answers 200 can still send JSON of the wrong shape (``choices`` a string, the
content a number, fields missing, an absurdly deep body). Such an answer is *malformed*: the
client records it as a format error and keeps its raw text, instead of failing on an
attribute or recursion error. A body that is not JSON at all (garbled or cut in transit) is
another matter: a ``ValueError``, retried like other transient failures.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sortie.core.errors import SortieError

RAW_LIMIT = 4000
"""Characters of a malformed body kept as the answer text (the rest is cut, marked as cut)."""


class MalformedAnswer(SortieError):
    """A 200 whose JSON is not a chat completion; carries the body, cut to ``RAW_LIMIT``."""

    def __init__(self, detail: str, body: str) -> None:
        super().__init__(detail)
        self.detail = detail
        self.body = body if len(body) <= RAW_LIMIT else body[:RAW_LIMIT] + " [cut]"


REASONING_FIELDS = ("reasoning_content", "reasoning")
"""Where servers put a reasoning model's thinking: vLLM, llama.cpp and DeepSeek
``reasoning_content``, Ollama and OpenRouter ``reasoning``."""


@dataclass(frozen=True, slots=True)
class Completion:
    """What a chat completion body says: the answer, its thinking, why it stopped, tokens."""

    text: str
    tokens_in: int = 0
    tokens_out: int = 0
    reasoning: str | None = None
    """The model's thinking, where the server sends it apart from the answer."""
    finish_reason: str | None = None
    """Why the answer ended (``length``: cut at the token limit), as the server says."""


def read_completion(body: str) -> Completion:
    """Return the answer, thinking, finish reason and token counts of ``body``.

    Raises:
        ValueError: the body is not JSON (garbled or cut): worth another attempt.
        MalformedAnswer: the body is JSON but not a chat completion.
    """
    try:
        data = json.loads(body)
    except RecursionError:
        raise MalformedAnswer("the body is nested too deep to read", body) from None
    choice = _choice(data, body)
    message = choice["message"]
    tokens = _tokens(data.get("usage"))
    finish = choice.get("finish_reason")
    return Completion(
        _content(message.get("content"), body),
        *tokens,
        reasoning=_reasoning(message),
        finish_reason=finish if isinstance(finish, str) else None,
    )


def _choice(data: Any, body: str) -> dict[str, Any]:
    """Return the first choice, checked to hold a message object."""
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise MalformedAnswer(f"'choices' is {_kind(choices)}, not a list of choices", body)
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise MalformedAnswer(f"'choices[0].message' is {_kind(message)}, not an object", body)
    return choices[0]


def _content(content: Any, body: str) -> str:
    """Return the answer text: a string, or the text parts of a list of parts joined."""
    if isinstance(content, list) and all(_is_text_part(part) for part in content):
        return "".join(part["text"] for part in content)
    if content is not None and not isinstance(content, str):
        raise MalformedAnswer(f"'message.content' is {_kind(content)}, not text", body)
    return content or ""  # null content (a refusal, a tool call): an empty answer


def _is_text_part(part: Any) -> bool:
    return isinstance(part, dict) and isinstance(part.get("text"), str)


def _reasoning(message: dict[str, Any]) -> str | None:
    """Return the thinking a server sent beside the answer, or None."""
    for field in REASONING_FIELDS:
        value = message.get(field)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _tokens(usage: Any) -> tuple[int, int]:
    """Return the token counts; missing or odd ones count 0 (they are not the answer)."""
    if not isinstance(usage, dict):
        return 0, 0
    return _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _kind(value: Any) -> str:
    if value is None:
        return "missing"
    if isinstance(value, list) and not value:
        return "an empty list"
    return f"a {type(value).__name__}"
