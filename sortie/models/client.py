"""The model client: one OpenAI-compatible chat call with retries, a cache and accounting.

Every agent that talks to a model goes through ``ModelClient.ask``. It sends one request per
answer (plus retries, format fallbacks and one validation retry), measures latency and token
usage per call as ``ModelCallRecord``s, and keeps answers in a content-addressed cache so a
run can be replayed offline. The API key is read from the environment when the SDK client is
built and is scrubbed from every error message.

Concurrency: at most ``config.concurrency`` calls are in flight at once *per worker process*
(a semaphore shared by the clients of that process with the same limit); a run with W worker
processes can have W times as many calls in flight.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai
from pydantic import BaseModel

from sortie.core.errors import ConfigError, SortieError
from sortie.core.trajectory import ModelCallRecord
from sortie.models.cache import CachedResponse, ResponseCache, request_key
from sortie.models.config import NO_KEY, ModelConfig, Structured, api_key
from sortie.models.retry import Backoff, ErrorKind, Failure, classify
from sortie.models.structured import (
    Parser,
    extract_json,
    response_format,
    retry_instructions,
    schema_instructions,
    validate,
)

Message = dict[str, Any]
_SENT_FIELDS = ("model", "messages", "temperature", "max_tokens", "response_format")


class ModelCallError(SortieError):
    """A model call failed for good: retries used up, or a refusal retrying cannot fix."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


class ReplayMissError(ConfigError):
    """A replay asked for a request its cache does not hold.

    The run differs from the recorded one: another model, prompt, image size, or code.
    """


@dataclass(frozen=True, slots=True)
class Reply:
    """A model's answer: the text, the validated value (or why not), and the calls it took."""

    text: str
    calls: tuple[ModelCallRecord, ...]
    value: BaseModel | None = None
    error: str | None = None
    """Why the answer could not be used (unparseable or off-schema after the retry)."""

    @property
    def latency(self) -> float:
        """Return the seconds spent in all calls of this answer (recorded latency on replay)."""
        return sum(call.latency for call in self.calls)


@dataclass(frozen=True, slots=True)
class _Sent:
    text: str
    rejected: str | None
    call: ModelCallRecord


_SLOTS: dict[int, threading.BoundedSemaphore] = {}
_SLOTS_LOCK = threading.Lock()


def process_slots(limit: int) -> threading.BoundedSemaphore:
    """Return this process's semaphore for ``limit`` calls in flight (made on first use)."""
    with _SLOTS_LOCK:
        return _SLOTS.setdefault(limit, threading.BoundedSemaphore(limit))


class ModelClient:
    """Asks an OpenAI-compatible chat model, with retries, a fallback chain and a cache."""

    def __init__(self, config: ModelConfig) -> None:
        """Prepare a client; nothing is contacted or opened until the first ``ask``.

        Raises:
            ConfigError: replay asked with a cache file that does not exist.
        """
        self.config = config
        self.mode = config.structured
        """The structured-output mode in use; it steps down the chain when a server refuses."""
        if config.replay and not Path(str(config.cache)).exists():
            raise ConfigError(f"replay: the cache file {config.cache} does not exist")
        self.cache = ResponseCache(config.cache) if config.cache else None
        self._backoff = Backoff(config.backoff, config.backoff_max, config.retry_after_max,
                                config.seed)  # fmt: skip
        self._sdk: openai.OpenAI | None = None

    def ask(self, messages: list[Message], schema: type[BaseModel] | None = None,
            parse: Parser = extract_json) -> Reply:
        """Return the model's answer to ``messages``; with ``schema``, validated against it.

        An answer that fails validation is retried once with the error shown to the model;
        if it fails again the reply carries ``error`` and no value (the caller records an
        invalid action). Server failures beyond the retry limit raise.

        Raises:
            ModelCallError: the server kept failing, or refused the request outright.
            ReplayMissError: replaying, and the cache does not hold the request.
        """
        text, calls = self._answer(messages, schema)
        if schema is None:
            return Reply(text, tuple(calls))
        value, error = self._validated(schema, text, parse)
        if value is None and error is not None:
            calls[-1] = calls[-1].model_copy(update={"error": ErrorKind.FORMAT})
            text, more = self._answer(self._retry_messages(messages, text, error), schema)
            calls += more
            value, error = self._validated(schema, text, parse)
            if value is None:
                calls[-1] = calls[-1].model_copy(update={"error": ErrorKind.FORMAT})
        return Reply(text, tuple(calls), value, error)

    def close(self) -> None:
        """Release the HTTP connections and the cache file."""
        if self._sdk is not None:
            self._sdk.close()
            self._sdk = None
        if self.cache is not None:
            self.cache.close()

    # --- the fallback chain -----------------------------------------------------------
    def _answer(self, messages: list[Message],
                schema: type[BaseModel] | None) -> tuple[str, list[ModelCallRecord]]:
        """Send until a request is not refused for its format; step down the chain if it is."""
        calls: list[ModelCallRecord] = []
        while True:
            sent = self._send(self._request(messages, schema))
            calls.append(sent.call)
            if sent.rejected is None:
                return sent.text, calls
            self._step_down(sent.rejected)

    def _step_down(self, reason: str) -> None:
        chain = Structured.CHAIN
        position = chain.index(self.mode)
        if position + 1 >= len(chain):
            raise ModelCallError(self._scrub(f"model {self.config.model}: request refused: "
                                             f"{reason}"), ErrorKind.CLIENT)  # fmt: skip
        self.mode = chain[position + 1]

    def _request(self, messages: list[Message], schema: type[BaseModel] | None) -> Message:
        """Return the request body (also the cache key's content): never holds the key."""
        request: Message = {"model": self.config.model, "messages": messages,
                            "temperature": self.config.temperature,
                            "max_tokens": self.config.max_tokens}  # fmt: skip
        if schema is not None:
            if self.mode != Structured.SCHEMA:
                request["messages"] = _with_instructions(messages, schema_instructions(schema))
            fmt = response_format(self.mode, schema)
            if fmt is not None:
                request["response_format"] = fmt
        return {**self.config.options, **request}

    def _validated(self, schema: type[BaseModel], text: str,
                   parse: Parser) -> tuple[BaseModel | None, str | None]:
        if len(text) > self.config.max_chars:
            return None, f"answer of {len(text)} characters, longer than {self.config.max_chars}"
        return validate(schema, text, parse)

    def _retry_messages(self, messages: list[Message], text: str, error: str) -> list[Message]:
        echo = text if len(text) <= self.config.max_chars else text[:1000] + " [cut]"
        return [*messages, {"role": "assistant", "content": echo},
                {"role": "user", "content": retry_instructions(error)}]  # fmt: skip

    # --- one request: cache, then HTTP with retries -----------------------------------
    def _send(self, request: Message) -> _Sent:
        key = request_key(request)
        cached = self.cache.get(key) if self.cache is not None else None
        if cached is not None:
            return _Sent(cached.text, cached.rejected, self._record(cached, cached=True))
        if self.config.replay:
            raise ReplayMissError(f"replay: request {key} is not in the cache "
                                  f"{self.config.cache} (model {self.config.model}); the run "
                                  f"asks something the recorded run did not")  # fmt: skip
        started = time.perf_counter()
        text, usage, attempts, rejected = self._post(request)
        response = CachedResponse(self.config.model, text[: self.config.max_chars + 1],
                                  usage[0], usage[1], time.perf_counter() - started, attempts,
                                  rejected)  # fmt: skip
        if self.cache is not None:
            self.cache.put(key, response)
        return _Sent(response.text, rejected, self._record(response, cached=False))

    def _post(self, request: Message) -> tuple[str, tuple[int, int], int, str | None]:
        """POST with retries; return (text, (tokens in, out), attempts, refusal reason)."""
        attempt = 1
        while True:
            try:
                text, usage = self._post_once(request)
                return text, usage, attempt, None
            except (openai.APIError, ValueError) as error:
                failure = classify(error)
            if failure.kind == ErrorKind.REJECTED and "response_format" in request:
                return "", (0, 0), attempt, failure.detail
            if failure.kind not in ErrorKind.TRANSIENT or attempt > self.config.max_retries:
                raise self._failed(failure, attempt)
            time.sleep(self._backoff.wait(attempt, failure))
            attempt += 1

    def _post_once(self, request: Message) -> tuple[str, tuple[int, int]]:
        sent = {name: request[name] for name in _SENT_FIELDS if name in request}
        extra = {name: value for name, value in request.items() if name not in _SENT_FIELDS}
        with process_slots(self.config.concurrency):
            raw = self._client().chat.completions.with_raw_response.create(
                **sent, extra_body=extra or None, timeout=self.config.timeout)
            completion = raw.parse()
        if not getattr(completion, "choices", None):
            raise ValueError("the response holds no choices")
        usage = completion.usage
        tokens = (usage.prompt_tokens, usage.completion_tokens) if usage else (0, 0)
        return completion.choices[0].message.content or "", tokens

    def _client(self) -> openai.OpenAI:
        if self._sdk is None:
            self._sdk = openai.OpenAI(api_key=api_key(self.config), base_url=self.config.base_url,
                                      max_retries=0, timeout=self.config.timeout)  # fmt: skip
        return self._sdk

    def _record(self, response: CachedResponse, cached: bool) -> ModelCallRecord:
        return ModelCallRecord(model=response.model, latency=response.latency,
                               tokens_in=response.tokens_in, tokens_out=response.tokens_out,
                               attempts=response.attempts, cached=cached,
                               error=ErrorKind.REJECTED if response.rejected else None)  # fmt: skip

    def _failed(self, failure: Failure, attempts: int) -> ModelCallError:
        message = (f"model {self.config.model}: {failure.kind} after {attempts} attempt(s): "
                   f"{failure.detail}")  # fmt: skip
        return ModelCallError(self._scrub(message), failure.kind)

    def _scrub(self, text: str) -> str:
        """Return ``text`` with the API key blotted out, should a server have echoed it."""
        key = api_key(self.config)
        return text if key == NO_KEY else text.replace(key, "[redacted]")


def _with_instructions(messages: list[Message], instructions: str) -> list[Message]:
    """Return ``messages`` with ``instructions`` added to the first system message.

    Appended there rather than as a new message: some chat templates (llama.cpp's among them)
    refuse a system message anywhere but first.
    """
    first = messages[0] if messages else None
    if first is not None and first.get("role") == "system" and isinstance(first["content"], str):
        return [{**first, "content": f"{first['content']}\n\n{instructions}"}, *messages[1:]]
    return [{"role": "system", "content": instructions}, *messages]
