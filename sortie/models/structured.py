"""Structured output: response formats, the schema in the prompt, and reading answers.

The fallback chain, strongest first: a ``json_schema`` response format (the server constrains
the answer), then JSON mode with the schema written into the prompt (and into the format,
where llama.cpp's servers read it), then the schema in the prompt alone. Whatever the mode,
the answer is validated with pydantic, and one retry shows the model its validation error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from typing import Any

from pydantic import BaseModel, ValidationError

from sortie.models.config import Structured

Parser = Callable[[str], Any]
"""Turns answer text into plain data for pydantic (JSON by default)."""

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)
_THINK = re.compile(r"<(think|thinking)>(.*?)(?:</\1>|$)", re.S | re.IGNORECASE)
REASONING_LIMIT = 8000
"""Longest thinking kept with a call (the rest is cut, marked as cut)."""
MAX_DEPTH = 64
"""Deepest nesting of objects and arrays an answer may have (a plan needs a handful); deeper
text is a format error before any parser sees it, instead of a RecursionError mid-run."""


def response_format(mode: str, schema: type[BaseModel]) -> dict[str, Any] | None:
    """Return the ``response_format`` field for ``mode``, or None when none is sent."""
    if mode == Structured.SCHEMA:
        return {
            "type": "json_schema",
            "json_schema": {
                "name": schema.__name__,
                "schema": schema.model_json_schema(),
                "strict": False,
            },
        }
    if mode == Structured.JSON:
        # llama.cpp's servers turn this schema into a grammar that constrains the answer (they
        # refuse json_schema); other servers in JSON mode ignore it or refuse, stepping down.
        return {"type": "json_object", "schema": schema.model_json_schema()}
    return None


def schema_instructions(schema: type[BaseModel]) -> str:
    """Return the text that asks for one JSON object following ``schema``."""
    text = json.dumps(schema.model_json_schema(), sort_keys=True)
    return f"Answer with one JSON object, nothing else, following this JSON schema:\n{text}"


def retry_instructions(error: str) -> str:
    """Return the follow-up message that shows the model why its answer was refused."""
    return (
        f"Your answer could not be used: {error}\n"
        "Answer again with one JSON object that follows the schema, nothing else."
    )


def nesting(text: str) -> int:
    """Return how deep ``[`` and ``{`` nest in ``text`` (brackets inside strings do not count)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth = max(depth - 1, 0)
    return deepest


def split_thinking(text: str) -> tuple[str, str | None]:
    """Return ``text`` without its ``<think>`` blocks, and their text (None if it had none).

    A block left open (the answer cut while thinking) runs to the end of the text.
    """
    found = [match.group(2).strip() for match in _THINK.finditer(text)]
    if not found:
        return text, None
    return _THINK.sub("", text).strip(), "\n\n".join(found)


def cut_reasoning(text: str | None) -> str | None:
    """Return thinking cut to ``REASONING_LIMIT`` characters (None stays None)."""
    if text is None or len(text) <= REASONING_LIMIT:
        return text
    return text[:REASONING_LIMIT] + " [cut]"


def extract_json(text: str) -> Any:
    """Return the JSON value in ``text``, tolerating code fences and words around an object.

    Thinking in ``<think>`` blocks is left out first (braces in it break nothing). When the
    text holds several JSON objects (a model that answers twice), the first one that reads
    as JSON is returned.

    Raises:
        ValueError: the text holds no JSON value, or one nested deeper than ``MAX_DEPTH``.
    """
    deepest = nesting(text)
    if deepest > MAX_DEPTH:
        raise ValueError(f"nested {deepest} levels deep; at most {MAX_DEPTH} are read")
    stripped = split_thinking(text)[0].strip()
    fenced = _FENCE.search(stripped)
    if fenced:
        stripped = fenced.group(1).strip()
    try:
        return json.loads(stripped)
    except json.JSONDecodeError as error:
        first = first_object(stripped)
        if first is None:
            raise error from None
        return first


def first_object(text: str) -> dict[str, Any] | None:
    """Return the first JSON object in ``text`` (words around it ignored), or None."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start >= 0:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    return None


def validate(
    schema: type[BaseModel],
    text: str,
    parse: Parser = extract_json,
    examples: frozenset[str] = frozenset(),
) -> tuple[BaseModel | None, str | None]:
    """Return (the validated answer, None), or (None, why it is not valid).

    An answer that validates but copies a placeholder, a field's description or one of the
    prompt's ``examples`` sentences (``"..."``, ``"why this command, briefly"``) is not an
    answer: its error starts with ``ECHO`` (the client records it as its own kind, ``echo``).
    """
    try:
        data = parse(text)
    except (ValueError, TypeError, RecursionError) as error:
        return None, f"not parseable: {error or type(error).__name__}"
    try:
        value = schema.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in error.errors()[:5]
        )
        return None, f"does not follow the schema: {problems}"
    copied = echoed(schema, value, examples)
    return (None, ECHO + copied) if copied else (value, None)


ECHO = "echo: "
"""How a validation error that is an echo of the prompt begins."""
_PLACEHOLDER = re.compile(r"^\s*(\.{2,}|…|<[^<>]*>|\?+|_{2,}|x{3,})\s*$", re.IGNORECASE)


def echoed(
    schema: type[BaseModel], value: BaseModel, examples: frozenset[str] = frozenset()
) -> str | None:
    """Return which field of ``value`` copies a placeholder, description or example, or None.

    ``examples`` are free-text sentences the prompt shows as an example answer's (its
    analysis): no planner writes one word for word of its own accord.
    """
    descriptions = _schema_descriptions(schema) | {_words(e) for e in examples}
    for where, text in _strings(value.model_dump(mode="json"), ""):
        if _PLACEHOLDER.match(text) or _words(text) in descriptions:
            return f"{where or '(root)'}: {text[:80]!r} copies the prompt instead of answering"
    return None


@cache
def _schema_descriptions(schema: type[BaseModel]) -> frozenset[str]:
    """Return a schema's field descriptions, normalised (built once per schema, not per answer)."""
    return frozenset(_words(d) for d in _descriptions(schema.model_json_schema()))


def _words(text: str) -> str:
    return " ".join(text.lower().split()).strip(" .")


def _descriptions(node: Any) -> list[str]:
    """Return every ``description`` in a JSON schema, nested models included."""
    if isinstance(node, dict):
        own = [node["description"]] if isinstance(node.get("description"), str) else []
        return own + [d for v in node.values() for d in _descriptions(v)]
    if isinstance(node, list):
        return [d for v in node for d in _descriptions(v)]
    return []


def _strings(node: Any, where: str) -> list[tuple[str, str]]:
    """Return every string in an answer with its dotted path."""
    if isinstance(node, str):
        return [(where, node)]
    if isinstance(node, dict):
        return [s for k, v in node.items() for s in _strings(v, f"{where}.{k}".lstrip("."))]
    if isinstance(node, list):
        return [s for i, v in enumerate(node) for s in _strings(v, f"{where}.{i}")]
    return []
