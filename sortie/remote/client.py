"""``remote``: an agent that asks an agent server for each action (docs/remote.md).

Every failure becomes data, as with the model client. A connection that is refused, lost or
times out is retried (``retries`` times, waiting ``backoff`` seconds, doubling); when the
retries are used up the agent raises ``RemoteAgentError`` and the episode ends as
``agent_error`` with the cause. An answer that is not a valid action (a 4xx, a malformed or
oversized body, another schema version, an unknown action) is recorded as an invalid action
and the episode goes on; a server that lost the session (404, it restarted) or whose policy
raised (5xx) ends the episode as ``agent_error``. The token (``SORTIE_AGENT_TOKEN``) is read
from the environment and blotted out of anything recorded.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from typing import Any, TypeVar

from sortie.agents.base import StepOutput
from sortie.core.actions import Action, InvalidAction
from sortie.core.errors import ConfigError, ParameterError, SortieError
from sortie.core.observation import Brief, MissionObservation, Sensor
from sortie.core.records import ModelCallRecord
from sortie.remote.convert import action_from_wire, brief_to_wire, observation_to_wire
from sortie.remote.link import Answer, Link, LinkError
from sortie.remote.server import TOKEN_ENV
from sortie.remote.wire import (
    MAX_MESSAGE_PIXELS,
    MAX_RESPONSE_BYTES,
    ActRequest,
    ActResponse,
    ErrorResponse,
    Hello,
    Message,
    ResetRequest,
    ResetResponse,
    WireError,
    parse_message,
)

M = TypeVar("M", bound=Message)


class RemoteAgentError(SortieError):
    """The agent server could not be reached or refused to start the episode."""


class RemoteAgent:
    """Plays any family by asking the agent server at ``url`` for every action."""

    name = "remote"
    # No ``families``: it plays any family; the server's agent says which it plays, and
    # refuses a brief of another.
    message_pixels = MAX_MESSAGE_PIXELS
    """Its images travel in messages of at most this many pixels (a run checks its camera)."""

    def __init__(
        self,
        url: str,
        timeout: float | str = 30.0,
        retries: int | str = 2,
        backoff: float | str = 0.5,
        max_bytes: int | str = MAX_RESPONSE_BYTES,
    ) -> None:
        """Prepare the agent; nothing is contacted until its sensors are asked for or it plays.

        Args:
            url: the server, ``http://HOST:PORT``.
            timeout: seconds to wait for one answer.
            retries: times a failed connection is tried again.
            backoff: seconds before the first retry (doubling after each).
            max_bytes: the largest answer read; a larger one is an invalid action.

        Raises:
            ParameterError: a setting that is not a positive number.
        """
        self.timeout = _number("timeout", timeout, float, 0.001)
        self.retries = _number("retries", retries, int, 0)
        self.backoff = _number("backoff", backoff, float, 0.0)
        self.link = Link(url, self.timeout, _number("max_bytes", max_bytes, int, 1024))
        self.url = url
        self._hello: Hello | None = None
        self._session = ""
        self._text: str | None = None
        self._calls: tuple[ModelCallRecord, ...] = ()

    # --- what the runner asks first -----------------------------------------------------
    @property
    def sensors(self) -> frozenset[Sensor]:
        """Return the images the served agent needs (asked once, from its hello)."""
        return frozenset(Sensor(s) for s in self.hello().sensors)

    def preflight(self) -> None:
        """Check the server answers, accepts the token and speaks this schema version.

        Raises:
            ConfigError: it does not (the message names the address and the cause).
        """
        self._hello = None
        self.hello()

    def hello(self) -> Hello:
        """Return the server's hello (asked once).

        Raises:
            ConfigError: unreachable, token refused, or another schema version.
        """
        if self._hello is None:
            try:
                answer = self._scrubbed(self.link.send("GET", "/v1/hello"))
            except LinkError as error:
                raise ConfigError(
                    self._scrub(f"{self._where()}: unreachable ({error}); is it running?")
                ) from None
            self._hello = self._hello_from(answer)
        return self._hello

    def _hello_from(self, answer: Answer) -> Hello:
        if answer.status == 401:
            raise ConfigError(f"{self._where()} refused the token: set {TOKEN_ENV} to its token")
        try:
            return self._read(Hello, answer)
        except WireError as error:
            raise ConfigError(
                self._scrub(f"{self._where()}: its hello is unusable: {error}")
            ) from None

    # --- the episode -------------------------------------------------------------------
    def reset(self, brief: Brief, seed: int) -> None:
        """Start a session on the server for this episode.

        Raises:
            ConfigError: the served agent does not play the brief's family (the run stops).
            RemoteAgentError: unreachable after the retries, or the server refused the brief.
        """
        self._session, self._text, self._calls = uuid.uuid4().hex, None, ()
        request = ResetRequest(session=self._session, seed=seed, brief=brief_to_wire(brief))
        answer = self._post("/v1/reset", request, "reset")
        try:
            self._read(ResetResponse, answer)
        except WireError as error:
            message = self._scrub(f"{self._where()} refused the reset: {error}")
            if error.code == "family":  # the run is set up wrong, as a local agent's would be
                raise ConfigError(message) from None
            raise RemoteAgentError(message) from None

    def act(self, observation: MissionObservation) -> Action:
        """Return the server's action; an invalid action if its answer is not one.

        Raises:
            RemoteAgentError: unreachable after the retries, the server lost the session, or
                its policy failed (5xx): the episode ends as agent_error.
        """
        request = ActRequest(
            session=self._session,
            step=observation.step,
            observation=observation_to_wire(observation),
        )
        answer = self._post("/v1/act", request, f"act at step {observation.step}")
        if answer.status == 404:  # the server forgot the session (restarted): cannot go on
            raise RemoteAgentError(self._scrub(f"{self._where()} lost the session: {_raw(answer)}"))
        if answer.status >= 500:  # the served policy raised, as a local agent would
            raise RemoteAgentError(self._scrub(f"{self._where()} failed: {_raw(answer)}"))
        try:
            response = self._read(ActResponse, answer)
        except WireError as error:
            self._text, self._calls = None, ()
            return InvalidAction(self._scrub(_raw(answer)), self._scrub(f"agent server: {error}"))
        self._text = response.text and self._scrub(response.text)
        self._calls = tuple(ModelCallRecord(**call.model_dump()) for call in response.calls)
        return action_from_wire(response.action)

    def step_output(self) -> StepOutput:
        """Return the served agent's words and model calls for the last action."""
        return StepOutput(text=self._text, calls=self._calls)

    # --- one exchange -------------------------------------------------------------------
    def _post(self, path: str, message: Message, what: str) -> Answer:
        """Send with retries on connection failures and 502/503/504; raise when they run out."""
        body = message.model_dump_json().encode()
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                answer = self.link.send("POST", path, body)
            except LinkError as error:
                cause = self._scrub(str(error))
                continue
            if answer.status not in (502, 503, 504):
                return self._scrubbed(answer)
            cause = f"HTTP {answer.status}"
        raise RemoteAgentError(
            self._scrub(f"{self._where()}: {what}: {cause} after {self.retries + 1} attempt(s)")
        )

    def _read(self, kind: type[M], answer: Answer) -> M:
        """Return the answer's message, or raise WireError for an error answer or a bad body."""
        if answer.body is None:
            raise WireError(413, "too_large", f"answer larger than {self.link.max_bytes} bytes")
        if answer.status != 200:
            raise WireError(answer.status, *_error_of(answer))
        return parse_message(kind, answer.body, self.link.max_bytes)

    def close(self) -> None:
        """Close the connection to the server (a later request would open another)."""
        self.link.close()

    def _where(self) -> str:
        return f"agent server at {self.link.address}"

    def _scrubbed(self, answer: Answer) -> Answer:
        """Return ``answer`` with the token blotted out of its body, before anything reads it."""
        token = self.link.token()
        if not token or answer.body is None:
            return answer
        return dataclasses.replace(answer, body=answer.body.replace(token.encode(), b"[token]"))

    def _scrub(self, text: str) -> str:
        token = self.link.token()
        return text.replace(token, "[token]") if token else text


def _error_of(answer: Answer) -> tuple[str, str]:
    """Return (code, message) of an error answer, however it is written."""
    try:
        error = parse_message(ErrorResponse, answer.body or b"")
    except WireError:
        return "http", f"HTTP {answer.status}: {_raw(answer)[:300]}"
    return error.error, f"HTTP {answer.status}: {error.message}"


def _raw(answer: Answer) -> str:
    if answer.body is None:
        return ""
    return answer.body[:2000].decode("utf-8", "replace")


def _number(name: str, value: Any, kind: type, least: float) -> Any:
    try:
        number = kind(value)
    except (TypeError, ValueError):
        number = None
    if number is None or number < least:
        raise ParameterError(f"agent 'remote': {name} must be a number ≥ {least:g}, got {value!r}")
    return number
