"""Protocol doubles of real model servers: each kind's quirks, for ``ModelServer(quirks=...)``.

One table, one row per kind of server, with what it really does that a plain
OpenAI-compatible server does not: its error bodies (context overflow, too many images, a
refused parameter, in its own words and shape), the content its chat template drops, how it
counts prompt tokens, where it tells its chat template, and how it sends a reasoning model's
thinking. The words are the servers' own (see ``sortie.models.errors``)::

    with ModelServer(policy, quirks=QUIRKS["llama-cpp-python"]) as server:
        ...  # a prompt whose user turn is a list of parts counts as the system prompt alone
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

Body = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Quirks:
    """What one kind of server does differently from a plain OpenAI-compatible one."""

    name: str
    context: int | None = None
    """Prompt tokens it takes; a longer prompt is refused in its words (or cut: ``truncates``)."""
    truncates: bool = False
    """A prompt over ``context`` is cut without a word, and counted as ``context`` (Ollama)."""
    max_images: int | None = None
    """Images it takes in one request (0: a text-only model); more are refused in its words."""
    refuses: frozenset[str] = frozenset()
    """Request fields the model refuses, in OpenAI's words (a reasoning model's)."""
    ignores_response_format: bool = False
    """The response format is read and ignored (no constraint, no refusal)."""
    drops_list_content: bool = False
    """Messages whose content is a list of parts are dropped (llama-cpp-python's formats)."""
    cached_prefix: bool = False
    """Prompt tokens shared with the previous request are not counted (Ollama's cache)."""
    template: str | None = None
    """The chat template it tells at ``template_route``."""
    template_route: str = ""
    reasoning_field: str | None = None
    """Where it sends the thinking (``reasoning_content``, ``reasoning``); None: inline."""
    thinking: str | None = None
    """The thinking of every answer (sent in ``reasoning_field``, else in a ``<think>`` block)."""
    parts: bool = False
    """The answer's content is a list of text parts."""
    finish_reason: str = "stop"
    errors: dict[str, tuple[int, Any]] = field(default_factory=dict)
    """Its error answers by cause (``context``, ``images``, ``parameter``): status and body."""


def _openai_error(message: str, code: str | None, param: str | None = None) -> Body:
    return {
        "error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    }


_OPENAI_CONTEXT = (
    400,
    _openai_error(
        "This model's maximum context length is {context} tokens. However, your messages "
        "resulted in {tokens} tokens. Please reduce the length of the messages.",
        "context_length_exceeded",
        "messages",
    ),
)
QUIRKS: dict[str, Quirks] = {
    q.name: q
    for q in (
        Quirks(
            "vllm",
            context=2048,
            max_images=1,
            errors={
                "context": (
                    400,
                    {
                        "object": "error",
                        "message": "This model's maximum context length is {context} tokens. "
                        "However, you requested {tokens} tokens ({tokens} in the messages, 0 "
                        "in the completion). Please reduce the length of the messages or "
                        "completion.",
                        "type": "BadRequestError",
                        "param": None,
                        "code": 400,
                    },
                ),
                "images": (
                    400,
                    {
                        "object": "error",
                        "message": "At most {max_images} image(s) may be provided in one prompt.",
                        "type": "BadRequestError",
                        "param": None,
                        "code": 400,
                    },
                ),
            },
        ),
        Quirks(
            "ollama",
            context=2048,
            truncates=True,
            cached_prefix=True,
            template="{{ if .System }}<start_of_turn>user\n{{ .System }}{{ end }}",
            template_route="/api/show",
            reasoning_field="reasoning",
        ),
        Quirks(
            "llama-cpp",
            context=2048,
            max_images=0,
            template="{% for m in messages %}<start_of_turn>{{ m.role }}{% endfor %}",
            template_route="/props",
            reasoning_field="reasoning_content",
            errors={
                "context": (
                    400,
                    {
                        "error": {
                            "code": 400,
                            "message": "request ({tokens} tokens) exceeds the available "
                            "context size ({context} tokens), try increasing it",
                            "type": "exceed_context_size_error",
                            "n_prompt_tokens": "{tokens}",
                            "n_ctx": "{context}",
                        }
                    },
                ),
                "images": (
                    500,
                    {
                        "error": {
                            "code": 500,
                            "message": "image input is not supported - hint: if this is "
                            "unexpected, you may need to provide the mmproj",
                            "type": "server_error",
                        }
                    },
                ),
            },
        ),
        Quirks(
            "llama-cpp-python",
            context=2048,
            drops_list_content=True,
            errors={"context": _OPENAI_CONTEXT},
        ),
        Quirks("transformers", ignores_response_format=True),
        Quirks(
            "openai-reasoning",
            refuses=frozenset({"max_tokens", "temperature"}),
            reasoning_field=None,
            errors={
                "context": _OPENAI_CONTEXT,
                "parameter:max_tokens": (
                    400,
                    _openai_error(
                        "Unsupported parameter: 'max_tokens' is not supported with this "
                        "model. Use 'max_completion_tokens' instead.",
                        "unsupported_parameter",
                        "max_tokens",
                    ),
                ),
                "parameter:temperature": (
                    400,
                    _openai_error(
                        "Unsupported value: 'temperature' does not support 0.0 with this "
                        "model. Only the default (1) value is supported.",
                        "unsupported_value",
                        "temperature",
                    ),
                ),
            },
        ),
        Quirks(
            "gemini",
            context=4096,
            errors={
                "context": (
                    400,
                    [
                        {
                            "error": {
                                "code": 400,
                                "message": "The input token count ({tokens}) exceeds the "
                                "maximum number of tokens allowed ({context}).",
                                "status": "INVALID_ARGUMENT",
                            }
                        }
                    ],
                )
            },
        ),
        Quirks(
            "anthropic",
            context=4096,
            ignores_response_format=True,
            errors={
                "context": (
                    400,
                    {
                        "type": "error",
                        "error": {
                            "type": "invalid_request_error",
                            "message": "prompt is too long: {tokens} tokens > {context} maximum",
                        },
                    },
                )
            },
        ),
    )
}
"""Every kind of server the doubles play, by name."""


def prompt_tokens(body: Body) -> int:
    """Return the prompt tokens of a request as the doubles count them (4 characters each)."""
    return len(json.dumps(body.get("messages", []))) // 4


def images(body: Body) -> int:
    """Return how many image parts the request's messages hold."""
    return sum(
        1
        for message in body.get("messages", [])
        if isinstance(message.get("content"), list)
        for part in message["content"]
        if isinstance(part, dict) and part.get("type") == "image_url"
    )


def refusal(quirks: Quirks, body: Body) -> tuple[int, Any] | None:
    """Return the status and body this kind of server refuses ``body`` with, or None."""
    for name in sorted(quirks.refuses & set(body)):
        return _filled(quirks.errors[f"parameter:{name}"], quirks, body)
    if quirks.max_images is not None and images(body) > quirks.max_images:
        return _filled(quirks.errors["images"], quirks, body)
    if quirks.context is not None and not quirks.truncates and "context" in quirks.errors:
        if prompt_tokens(body) > quirks.context:
            return _filled(quirks.errors["context"], quirks, body)
    return None


def _filled(error: tuple[int, Any], quirks: Quirks, body: Body) -> tuple[int, Any]:
    """Return an error with its ``{tokens}``, ``{context}``, ``{max_images}`` filled in."""
    values = {
        "tokens": prompt_tokens(body),
        "context": quirks.context,
        "max_images": quirks.max_images,
    }
    text = json.dumps(error[1])
    for name, value in values.items():
        text = text.replace("{" + name + "}", str(value))
    return error[0], json.loads(text)


def counted(quirks: Quirks, body: Body, previous: Body | None) -> int:
    """Return the prompt tokens this kind of server reports for ``body``."""
    messages = body.get("messages", [])
    if quirks.drops_list_content:
        messages = [m for m in messages if not isinstance(m.get("content"), list)]
    tokens = prompt_tokens({"messages": messages})
    if quirks.cached_prefix and previous is not None:
        tokens -= _shared(json.dumps(messages), json.dumps(previous.get("messages", []))) // 4
    if quirks.truncates and quirks.context is not None:
        tokens = min(tokens, quirks.context)
    return max(tokens, 1)


def _shared(a: str, b: str) -> int:
    """Return the length of the common start of two strings."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def shaped(quirks: Quirks, completion: Body, body: Body, previous: Body | None) -> Body:
    """Return ``completion`` as this kind of server sends it."""
    choice = dict(completion["choices"][0])
    message = dict(choice["message"])
    if quirks.thinking is not None and quirks.reasoning_field:
        message[quirks.reasoning_field] = quirks.thinking
    elif quirks.thinking is not None:
        message["content"] = f"<think>{quirks.thinking}</think>\n{message['content']}"
    if quirks.parts:
        message["content"] = [{"type": "text", "text": message["content"]}]
    choice.update(message=message, finish_reason=quirks.finish_reason)
    usage = {**completion["usage"], "prompt_tokens": counted(quirks, body, previous)}
    return {**completion, "choices": [choice], "usage": usage}
