"""The model client: one OpenAI-compatible chat call with retries, a cache and accounting.

Every agent that talks to a model goes through ``ModelClient.ask``. It sends one request per
answer (plus retries, format fallbacks and one validation retry), measures latency and token
usage per call as ``ModelCallRecord``s, and keeps answers in a content-addressed cache so a
run can be replayed offline. The API key is read from the environment when the SDK client is
built; it (and any user:password of the base URL) is scrubbed from every answer, error and
cached row, should a server echo it. ``preflight`` checks the server before a run.

Concurrency: at most ``config.concurrency`` calls are in flight at once *per worker process*
(a semaphore shared by the clients of that process with the same limit); a run with W worker
processes can have W times as many calls in flight.
"""

from __future__ import annotations

import dataclasses
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai
from pydantic import BaseModel

from sortie.core.errors import ConfigError, SortieError
from sortie.core.records import ModelCallRecord
from sortie.models.accounting import CallClock, Reported, price, reported, reported_by
from sortie.models.adapt import Fields, Formats, param_refusal, refused_field
from sortie.models.cache import CachedResponse, ResponseCache, request_key
from sortie.models.completion import Completion, MalformedAnswer, read_completion
from sortie.models.config import ModelConfig, Structured, api_key, redact_url, scrub
from sortie.models.content_check import check_content
from sortie.models.deadline import http_client, whole_answer
from sortie.models.errors import Cause, Refusal, context_fix, images_fix, refusal_of
from sortie.models.health import Unhealthy, is_local, wait_until_healthy
from sortie.models.preflight import check_server
from sortie.models.retry import Backoff, ErrorKind, Failure, classify
from sortie.models.server_kinds import server_kind, told_template
from sortie.models.structured import (
    ECHO,
    Parser,
    cut_reasoning,
    extract_json,
    response_format,
    retry_instructions,
    schema_instructions,
    split_thinking,
    validate,
)

Message = dict[str, Any]
_SENT_FIELDS = ("model", "messages", "temperature", "max_tokens", "response_format")
"""Fields the SDK takes as arguments; the others (``max_completion_tokens``, options) go in
the body as they are."""


CHARS_PER_TOKEN = 4.0
"""A rough count of characters per token of English text, to size a request."""
MIN_CHECKED_TOKENS = 200
"""Requests smaller than this are not checked (the estimate is too rough)."""
SHORT_PROMPT = 0.3
"""A prompt counted below this share of its estimated size lost part of itself."""
PROBE_TOKENS = 8
"""Answer tokens allowed to a content check's probe (its answer is not read)."""
REASK_ECHO = 1000
"""Longest part of an unusable answer sent back to the model when it is asked again: a
runaway answer is not worth its tokens again, and its start shows what went wrong."""


class ModelWarning(UserWarning):
    """Something about the model server that makes a run look normal when it is not."""


class ModelCallError(SortieError):
    """A model call failed for good: retries used up, or a refusal retrying cannot fix."""

    def __init__(self, message: str, kind: str, calls: tuple[ModelCallRecord, ...] = ()) -> None:
        super().__init__(message)
        self.kind = kind
        self.calls = calls
        """The calls of the failed answer, this one last (its error kind says why)."""


class QuotaError(ModelCallError, ConfigError):
    """The server said the account's quota is spent: every later call would fail alike.

    A ConfigError too, so it stops the run instead of ending each episode in an error (the
    run resumes where it stopped once the quota is raised).
    """


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
    response: CachedResponse
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
        self.formats = Formats(config.structured)
        """The structured-output mode of each kind of request (its schema's name)."""
        self.fields = Fields(config)
        """The request fields the model takes (renamed or left out after a refusal)."""
        self.kind = server_kind(config)
        if config.replay and not Path(str(config.cache)).exists():
            raise ConfigError(f"replay: the cache file {config.cache} does not exist")
        self.cache = ResponseCache(config.cache) if config.cache else None
        self._backoff = Backoff(
            config.backoff, config.backoff_max, config.retry_after_max, config.seed
        )
        self._sdk: openai.OpenAI | None = None
        self._template: str | None = None
        self._warned_tokens = False

    def ask(
        self,
        messages: list[Message],
        schema: type[BaseModel] | None = None,
        parse: Parser = extract_json,
        revalidate: bool = True,
        examples: frozenset[str] = frozenset(),
    ) -> Reply:
        """Return the model's answer to ``messages``; with ``schema``, validated against it.

        An answer that fails validation is retried once with the error shown to the model
        (unless ``revalidate`` is False: callers with their own re-asking, ``homiebot``);
        if it fails again the reply carries ``error`` and no value (the caller records an
        invalid action). So does an answer of the wrong shape (a malformed body: its raw text,
        cut, is the reply's text), and one that copies the prompt: a placeholder, a field's
        description or one of ``examples`` (the example answer's free text), an ``echo``.
        Server failures beyond the retry limit raise.

        Raises:
            ModelCallError: the server kept failing, or refused the request outright.
            ReplayMissError: replaying, and the cache does not hold the request.
        """
        text, calls, error = self._answer(messages, schema)
        if schema is None or error is not None:
            return Reply(text, tuple(calls), None, error)
        value, error = self._validated(schema, text, parse, examples)
        error = _cut_said(calls[-1], error)
        if value is None and error is not None:
            calls[-1] = _format_error(calls[-1], error)
            if not revalidate:
                return Reply(text, tuple(calls), None, error)
            try:
                text, more, error = self._answer(
                    self._retry_messages(messages, text, error), schema
                )
            except ModelCallError as failed:
                failed.calls = (*calls, *failed.calls)
                raise
            calls += more
            if error is None:
                value, error = self._validated(schema, text, parse, examples)
                error = _cut_said(calls[-1], error)
            if value is None:
                calls[-1] = _format_error(calls[-1], error)
        return Reply(text, tuple(calls), value, error)

    def preflight(self, parts: bool = True) -> None:
        """Check that the server answers and serves the model; a replay contacts nothing.

        With ``check_content``, three small requests then check that the server's chat
        template keeps list content (if the run sends it: ``parts``, a message content that
        is a list of text and image parts) and the system message
        (``sortie.models.content_check``).

        Raises:
            ConfigError: the server is unreachable, refuses the key, or does not know the
                model (the message names the host and port, or the models it serves); or its
                template drops part of a prompt (the message names the fix).
        """
        if self.config.replay:
            return
        check_server(self._client(), self.config)
        if self.config.check_content:
            where = f"model {self.config.model} at {redact_url(self.config.base_url)}"
            check_content(self._prompt_tokens, where, self.config.system == "user", parts)

    def _prompt_tokens(self, messages: list[Message]) -> int:
        """Send ``messages`` as a run would, uncached; return the prompt tokens counted (0: none).

        A refused field is adapted to as in a run; a call that fails counts 0 (the run's
        own calls will say why).
        """
        folded = fold_system(messages) if self.config.system == "user" else messages
        request = {**self.config.options, "model": self.config.model, "messages": folded}
        request |= {"temperature": self.config.temperature, "max_tokens": PROBE_TOKENS}
        for _ in range(len(Fields.ADAPTABLE)):
            try:
                response = self._post(self.fields.apply(request))
            except ModelCallError:
                return 0
            field = refused_field(response.rejected or "")
            if response.rejected is None or field is None or not self.fields.refuse(field):
                return response.tokens_in if response.rejected is None else 0
        return 0

    def close(self) -> None:
        """Release the HTTP connections and the cache file."""
        if self._sdk is not None:
            self._sdk.close()
            self._sdk = None
        if self.cache is not None:
            self.cache.close()

    # --- the fallback chain -----------------------------------------------------------
    def _answer(
        self, messages: list[Message], schema: type[BaseModel] | None
    ) -> tuple[str, list[ModelCallRecord], str | None]:
        """Send until a request is not refused for its format; step down the chain if it is.

        Return the answer text, the calls, and why the answer is malformed (None if it is not).
        """
        calls: list[ModelCallRecord] = []
        kind = schema.__name__ if schema is not None else ""
        while True:
            try:
                sent = self._send(self._request(messages, schema), self._shown_format(kind))
            except ModelCallError as error:
                error.calls = (*calls, *error.calls)  # the answer's earlier calls count too
                raise
            calls.append(sent.call)
            response = sent.response
            if response.rejected is None:
                self.formats.answered(kind)
                malformed = response.malformed
                return response.text, calls, malformed and f"malformed answer: {malformed}"
            try:
                self._adapt(kind, response.rejected)
            except ModelCallError as error:
                error.calls = tuple(calls)
                raise

    def _adapt(self, kind: str, reason: str) -> None:
        """Rename or leave out a refused field, or step ``kind`` down to a weaker format.

        Raises:
            ModelCallError: the field cannot be left out, or no weaker format is left.
        """
        field = refused_field(reason)
        if field is None and self.formats.step_down(kind):
            return
        if field is not None and self.fields.refuse(field):
            return
        fix = (
            f"; leave it out with -a omit={field}, or drop it from options"
            if field is not None
            else ""
        )
        raise ModelCallError(
            self._scrub(f"model {self.config.model}: request refused: {reason}{fix}"),
            ErrorKind.CLIENT,
        )

    def _shown_format(self, kind: str) -> str | None:
        """Return the format a call is recorded with, if not the one the settings start at."""
        mode = self.formats.mode(kind)
        return None if mode == self.config.structured else mode

    def _request(self, messages: list[Message], schema: type[BaseModel] | None) -> Message:
        """Return the request body (also the cache key's content): never holds the key."""
        request: Message = {
            "model": self.config.model,
            "messages": messages,
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
        }
        if schema is not None:
            mode = self.formats.mode(schema.__name__)
            if mode != Structured.SCHEMA or not self.kind.reads_response_format:
                request["messages"] = _with_instructions(messages, schema_instructions(schema))
            fmt = response_format(mode, schema)
            if fmt is not None:
                request["response_format"] = fmt
        if self.config.system == "user":
            request["messages"] = fold_system(request["messages"])
        return self.fields.apply({**self.config.options, **request})

    def _validated(
        self, schema: type[BaseModel], text: str, parse: Parser, examples: frozenset[str]
    ) -> tuple[BaseModel | None, str | None]:
        if len(text) > self.config.max_chars:
            return None, f"answer of {len(text)} characters, longer than {self.config.max_chars}"
        return validate(schema, text, parse, examples)

    def _retry_messages(self, messages: list[Message], text: str, error: str) -> list[Message]:
        echo = text if len(text) <= REASK_ECHO else text[:REASK_ECHO] + " [cut]"
        return [
            *messages,
            {"role": "assistant", "content": echo},
            {"role": "user", "content": retry_instructions(error)},
        ]

    # --- one request: cache, then HTTP with retries -----------------------------------
    def _send(self, request: Message, shown_format: str | None = None) -> _Sent:
        key = request_key(request, self.config.base_url)
        cached = self.cache.get(key) if self.cache is not None else None
        if cached is not None:
            call = self._record(cached, cached=True, shown_format=shown_format)
            return _Sent(self._scrubbed(cached), call)
        if self.config.replay:
            raise ReplayMissError(
                f"replay: request {key} is not in the cache "
                f"{self.config.cache} (model {self.config.model} at "
                f"{redact_url(self.config.base_url)}); the run asks something "
                f"the recorded run did not"
            )
        response = self._scrubbed(self._post(request))
        self._check_prompt_tokens(request, response)
        if self.cache is not None:
            self.cache.put(key, response)
        return _Sent(response, self._record(response, cached=False, shown_format=shown_format))

    def _post(self, request: Message) -> CachedResponse:
        """POST with retries; return the answer, a refusal to adapt to, or a malformed one.

        Tokens count over every attempt whose body reports them; the call's time is split
        into the waits before retries, the failed attempts and the answer (``CallClock``).
        """
        clock, said, attempt = CallClock(), Reported(), 1
        while True:
            clock.attempt()
            try:
                body = self._post_once(request)
                said += reported(body)
                return self._answered(clock, attempt, said, read_completion(body))
            except MalformedAnswer as error:
                kept = self._response(clock, attempt, said, error.body, malformed=error.detail)
                return dataclasses.replace(kept, chat_template=self.chat_template())
            except (openai.APIError, ValueError) as error:
                failure = classify(error)
                said += reported_by(error)
                refusal = refusal_of(error, request)
                if refusal is not None:
                    return self._refused(clock, (attempt, said), failure, refusal)
            clock.failed()
            if failure.kind not in ErrorKind.TRANSIENT or attempt > self.config.max_retries:
                raise self._failed(failure, attempt, clock, said)
            with clock.waiting():
                time.sleep(self._backoff.wait(attempt, failure))
                if failure.kind == ErrorKind.TIMEOUT:
                    self._wait_until_free(attempt, clock, said)
            attempt += 1

    def _refused(
        self, clock: CallClock, tried: tuple[int, Reported], failure: Failure, refusal: Refusal
    ) -> CachedResponse:
        """Return a refusal to adapt to (format, field), or raise the one error that says why.

        ``tried`` is the attempts so far and the tokens the server reported over them.

        Raises:
            ModelCallError: the prompt does not fit, holds images the server refuses, or is
                refused for another reason (retrying the same request cannot help).
        """
        attempts, said = tried
        rejected = None
        if refusal.cause is Cause.FORMAT:
            rejected = failure.detail
        elif refusal.cause is Cause.PARAMETER and refusal.param is not None:
            rejected = param_refusal(refusal.param, failure.detail)
        if rejected is not None:  # the template served the refusal too: said the same way
            response = self._response(clock, attempts, said, rejected=rejected)
            return dataclasses.replace(response, chat_template=self.chat_template())
        if refusal.cause is Cause.CONTEXT:
            failure = Failure(Cause.CONTEXT.value, detail=context_fix(refusal.message))
        elif refusal.cause is Cause.IMAGES:
            failure = Failure(Cause.IMAGES.value, detail=images_fix(refusal.message))
        else:
            failure = Failure(ErrorKind.CLIENT, detail=failure.detail)
        clock.failed()
        raise self._failed(failure, attempts, clock, said)

    def _wait_until_free(self, attempts: int, clock: CallClock, said: Reported) -> None:
        """After a time-out, wait until a server on this machine passes its health check.

        Raises:
            ModelCallError: it did not within ``health_wait`` seconds (default ``timeout``).
        """
        budget = self.config.health_budget
        if not budget or not is_local(self.config.base_url):
            return
        try:
            wait_until_healthy(self._client(), self.config, budget)
        except Unhealthy as why:
            detail = (
                f"request timed out, and the server did not pass its health check in "
                f"{budget:g} s ({why}); raise health_wait or timeout"
            )
            failure = Failure(ErrorKind.TIMEOUT, detail=detail)
            raise self._failed(failure, attempts, clock, said) from None

    def _response(
        self,
        clock: CallClock,
        attempts: int,
        said: Reported,
        text: str = "",
        rejected: str | None = None,
        malformed: str | None = None,
    ) -> CachedResponse:
        response = CachedResponse(
            self.config.model,
            text[: self.config.max_chars + 1],
            said.tokens_in,
            said.tokens_out,
            clock.latency,
            attempts,
            rejected,
            malformed,
        )
        return dataclasses.replace(
            response, waited=clock.waited, failed_time=clock.failed_time, served=said.served
        )

    def _answered(
        self, clock: CallClock, attempts: int, said: Reported, completion: Completion
    ) -> CachedResponse:
        """Return the stored form of an answer: a ``<think>`` block kept apart from it."""
        text, thought = split_thinking(completion.text)
        return dataclasses.replace(
            self._response(clock, attempts, said, text),
            reasoning=cut_reasoning(completion.reasoning or thought),
            finish_reason=completion.finish_reason,
            chat_template=self.chat_template(),
        )

    def chat_template(self) -> str | None:
        """Return the chat template that serves the model: as stated, else as the server says.

        The server is asked once per client (None if it does not tell).
        """
        if self.config.chat_template:
            return self.config.chat_template
        if self._template is None:
            self._template = told_template(self.config, self.kind) or ""
        return self._template or None

    def _post_once(self, request: Message) -> str:
        """Send one attempt; return the body (read by us: the SDK's reading trusts its shape)."""
        sent = {name: request[name] for name in _SENT_FIELDS if name in request}
        extra = {name: value for name, value in request.items() if name not in _SENT_FIELDS}
        with process_slots(self.config.concurrency):
            with whole_answer(self.config.timeout):  # a trickled answer is cut, as a slow one
                raw = self._client().chat.completions.with_raw_response.create(
                    **sent, extra_body=extra or None, timeout=self.config.timeout
                )
                return raw.text

    def _client(self) -> openai.OpenAI:
        if self._sdk is None:
            self._sdk = openai.OpenAI(
                api_key=api_key(self.config),
                base_url=self.config.base_url,
                max_retries=0,
                timeout=self.config.timeout,
                http_client=http_client(),
            )
        return self._sdk

    def _check_prompt_tokens(self, request: Message, response: CachedResponse) -> None:
        """Warn, once, when the server counted far fewer prompt tokens than the request holds.

        A chat template that drops system messages (llama.cpp's ``gemma``) leaves the model
        without the actions, skills and schema, and the run looks normal: the prompt token
        count is the only clue.
        """
        if self._warned_tokens or not response.tokens_in or self.kind.uncounted_cache:
            return  # Ollama's counts leave its cache out: the preflight's probes tell instead
        text = sum(len(part) for part in _texts(request.get("messages", [])))
        expected = text / CHARS_PER_TOKEN
        if expected >= MIN_CHECKED_TOKENS and response.tokens_in < SHORT_PROMPT * expected:
            self._warned_tokens = True
            fix = (
                "may drop messages whose content is a list (llama-cpp-python's built-in "
                "formats do); serve it with a template that reads them, or -a observation=text"
                if self.config.system == "user"
                else "may drop the system message (llama.cpp's gemma does) or list content; "
                "try -a system=user"
            )
            warnings.warn(
                f"model {self.config.model}: the server counted {response.tokens_in} prompt "
                f"tokens for a request of about {expected:.0f}: its chat template {fix}",
                ModelWarning,
                stacklevel=2,
            )

    def _record(
        self, response: CachedResponse, cached: bool, shown_format: str | None = None
    ) -> ModelCallRecord:
        error = (
            (ErrorKind.REJECTED if refused_field(response.rejected) is None else Cause.PARAMETER)
            if response.rejected
            else (ErrorKind.FORMAT if response.malformed else None)
        )
        finish = response.finish_reason
        return ModelCallRecord(
            model=response.model,
            latency=response.latency,
            tokens_in=response.tokens_in,
            tokens_out=response.tokens_out,
            attempts=response.attempts,
            cached=cached,
            error=error,
            format=shown_format,
            finish_reason=None if finish in (None, "stop") else finish,
            reasoning=response.reasoning,
            chat_template=response.chat_template,
            **self._spent(response),
        )

    def _spent(self, response: CachedResponse) -> dict[str, Any]:
        """Return a call's waits, failed time, model served and the cost of its tokens."""
        served = response.served if response.served != response.model else None
        return {
            "waited": response.waited,
            "failed_time": response.failed_time,
            "served": served,
            "cost": price(
                response.tokens_in, response.tokens_out, self.config.price_in, self.config.price_out
            ),
        }

    def _failed(
        self, failure: Failure, attempts: int, clock: CallClock, said: Reported
    ) -> ModelCallError:
        message = (
            f"model {self.config.model}: {failure.kind} after {attempts} attempt(s): "
            f"{failure.detail}"
        )
        failed = self._response(clock, attempts, said)
        call = self._record(failed, cached=False).model_copy(update={"error": failure.kind})
        kind = QuotaError if failure.kind == ErrorKind.QUOTA else ModelCallError
        return kind(self._scrub(message), failure.kind, (call,))

    def _scrub(self, text: str) -> str:
        """Return ``text`` with the secrets blotted out, should a server have echoed them."""
        return scrub(text, self.config)

    def _scrubbed(self, response: CachedResponse) -> CachedResponse:
        """Return ``response`` scrubbed (rows of caches written before scrubbing too)."""
        return dataclasses.replace(
            response,
            text=self._scrub(response.text),
            rejected=response.rejected and self._scrub(response.rejected),
            malformed=response.malformed and self._scrub(response.malformed),
            served=response.served and self._scrub(response.served),
        )


def _cut_said(call: ModelCallRecord, error: str | None) -> str | None:
    """Return ``error`` saying the answer was cut at the token limit, if the server says so."""
    if error is None or call.finish_reason != "length":
        return error
    return f"{error} (the answer was cut at max_tokens: answer shorter, or raise -a max_tokens)"


def _format_error(call: ModelCallRecord, error: str | None) -> ModelCallRecord:
    """Return the call marked as a format error, or an echo of the prompt (its own kind)."""
    kind = ErrorKind.ECHO if error and error.startswith(ECHO) else ErrorKind.FORMAT
    return call.model_copy(update={"error": kind})


def fold_system(messages: list[Message]) -> list[Message]:
    """Return ``messages`` with the system messages' text put before the first user message's.

    For chat templates that drop system messages; the user message keeps its images.
    """
    system = "\n\n".join(m["content"] for m in messages if m.get("role") == "system")
    rest = [m for m in messages if m.get("role") != "system"]
    first = next((i for i, m in enumerate(rest) if m.get("role") == "user"), None)
    if not system or first is None:
        return messages
    content = rest[first]["content"]
    if isinstance(content, str):
        folded: Any = f"{system}\n\n{content}"
    else:
        folded = [{"type": "text", "text": system}, *content]
    return [*rest[:first], {**rest[first], "content": folded}, *rest[first + 1 :]]


def _texts(messages: list[Message]) -> list[str]:
    """Return every text of ``messages`` (string contents and text parts)."""
    texts = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [p.get("text", "") for p in content if isinstance(p, dict)]
    return texts


def _with_instructions(messages: list[Message], instructions: str) -> list[Message]:
    """Return ``messages`` with ``instructions`` added to the first system message.

    Appended there rather than as a new message: some chat templates (llama.cpp's among them)
    refuse a system message anywhere but first.
    """
    first = messages[0] if messages else None
    if first is not None and first.get("role") == "system" and isinstance(first["content"], str):
        return [{**first, "content": f"{first['content']}\n\n{instructions}"}, *messages[1:]]
    return [{"role": "system", "content": instructions}, *messages]
