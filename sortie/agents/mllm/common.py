"""What the model-driven agents share: their arguments, the client, the per-step output."""

from __future__ import annotations

import dataclasses
from enum import StrEnum
from typing import Any

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel

from sortie.agents.base import StepOutput
from sortie.agents.mllm.prompts import Prompts
from sortie.core.errors import ParameterError
from sortie.core.observation import Sensor
from sortie.models.client import ModelClient, Reply
from sortie.models.config import ModelConfig, as_bool
from sortie.models.images import image_part
from sortie.models.structured import Parser, extract_json

TEXT_LIMIT = 8000
"""Longest answer text kept in a step record (a runaway answer is cut, marked as cut)."""
REASK_STREAK = 3
"""Unreadable answers in a row, each still unreadable when asked again, after which an agent
stops re-asking for the rest of the episode, until an answer reads at once: a model that
cannot keep to the format then costs one call a step, not two."""


class ModelAgent:
    """Base of agents that decide with a chat model; subclasses build messages and actions.

    Construction reads settings only: no server is contacted and no file is opened (the
    runner builds one agent in the main process just to read its sensors).
    """

    templates: tuple[str, ...] = ()

    def __init__(
        self,
        prompt_dir: str | None,
        resolution: int | str,
        image_format: str,
        model_args: dict[str, Any],
    ) -> None:
        """Resolve the model settings (arguments, else ``SORTIE_MODEL_*``) and the prompts."""
        self.config = ModelConfig.from_args(model_args)
        self.prompts = Prompts.load(self.templates, prompt_dir)
        self.resolution = as_int("resolution", resolution)
        self.image_format = image_format
        self._client: ModelClient | None = None
        self._output = StepOutput()
        self._first = True
        self._failed_reasks = 0
        """Re-asks in a row whose answer was unreadable too (``REASK_STREAK``)."""

    @property
    def client(self) -> ModelClient:
        """Return the model client, made on first use (in the process that runs episodes)."""
        if self._client is None:
            self._client = ModelClient(self.config)
        return self._client

    def preflight(self) -> None:
        """Check the model server before a run (nothing on a replay); then let go of it.

        The server's chat template must keep list content only if the agent sends images
        (its camera is the RGB one): in text mode every message content is one string.

        Raises:
            ConfigError: the server is unreachable at its address, refuses the key, or does
                not serve the model (the message lists the models it serves); or its chat
                template drops part of the prompt.
        """
        try:
            self.client.preflight(parts=Sensor.RGB in getattr(self, "sensors", {Sensor.RGB}))
        finally:
            self.close()

    def start_episode(self) -> None:
        """Mark the next model step as the episode's first (it records the templates)."""
        self._first, self._output, self._failed_reasks = True, StepOutput(), 0

    def ask(
        self,
        messages: list[dict[str, Any]],
        schema: type[BaseModel],
        parse: Parser = extract_json,
        examples: frozenset[str] = frozenset(),
    ) -> Reply:
        """Return the model's answer, re-asked once if unreadable while re-asks still help.

        After ``REASK_STREAK`` re-asks in a row that were unreadable too, an unreadable
        answer is returned as it is (the step becomes an invalid action, its call a format
        error) until a readable answer comes; the count starts again each episode.
        """
        reasking = self._failed_reasks < REASK_STREAK
        reply = self.client.ask(messages, schema, parse, revalidate=reasking, examples=examples)
        if reply.value is not None:
            self._failed_reasks = 0
        elif reasking:
            self._failed_reasks += 1
        else:
            why = f"{reply.error} (not asked again: the last {REASK_STREAK} re-asks failed too)"
            reply = dataclasses.replace(reply, error=why)
        return reply

    def step_output(self) -> StepOutput:
        """Return the text, model calls and decision time of the last ``act``."""
        return self._output

    def close(self) -> None:
        """Release the client's connections and cache (a later call would make a new client)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def image(self, rgb: NDArray[np.uint8]) -> dict[str, object]:
        """Return ``rgb`` as a message part at the configured resolution and format."""
        return image_part(rgb, self.resolution, self.image_format)

    def note(self, reply: Reply | None) -> None:
        """Set the step output: the answer (templates first at step 0) and its calls.

        The decision time charged is the calls' latency (the cached one on a replay), so a
        live run and its replay put the same numbers on the latency clock; steps that only
        carry out an earlier command cost nothing beyond the control period.
        """
        if reply is None:
            self._output = StepOutput(None, (), 0.0)
            return
        text = reply.text if len(reply.text) <= TEXT_LIMIT else reply.text[:TEXT_LIMIT] + " [cut]"
        if self._first:
            text, self._first = f"{self.prompts.record()}{text}", False
        self._output = StepOutput(text, reply.calls, reply.latency)


def as_int(name: str, raw: int | str) -> int:
    """Return an agent argument as an int (the command line passes strings)."""
    try:
        return int(raw)
    except (TypeError, ValueError):
        raise ParameterError(f"agent argument {name}: expected an integer, got {raw!r}") from None


def as_float(name: str, raw: float | str) -> float:
    """Return an agent argument as a float (the command line passes strings)."""
    try:
        return float(raw)
    except (TypeError, ValueError):
        raise ParameterError(f"agent argument {name}: expected a number, got {raw!r}") from None


def as_flag(name: str, raw: bool | str) -> bool:
    """Return an agent argument as a bool (``true``/``false``/``1``/``0`` from the command line)."""
    try:
        return as_bool(raw)
    except ValueError:
        raise ParameterError(
            f"agent argument {name}: expected true or false, got {raw!r}"
        ) from None


class ObservationMode(StrEnum):
    """What a model agent is shown of its camera (the ``observation`` agent argument)."""

    IMAGES = "images"
    TEXT = "text"
    """The text-observation ablation: the names of the things in view, no image."""


def as_mode(raw: str) -> ObservationMode:
    """Return the ``observation`` agent argument, or raise naming the modes."""
    try:
        return ObservationMode(str(raw).strip().lower())
    except ValueError:
        allowed = ", ".join(m.value for m in ObservationMode)
        raise ParameterError(
            f"agent argument observation: expected one of {allowed}, got {raw!r}"
        ) from None


def seen_classes(semantic: NDArray[np.int32] | None, classes: dict[int, str]) -> list[str]:
    """Return the classes a semantic image shows, sorted: what a perfect detector reports.

    Instance ids the label map does not name are left out (a detector knows only classes).
    """
    if semantic is None:
        return []
    ids = (int(i) for i in np.unique(semantic) if i != 0)
    return sorted({classes[i] for i in ids if i in classes})


def objects_text(names: list[str] | tuple[str, ...]) -> str:
    """Return a list of object names as one line (``nothing`` if empty)."""
    return ", ".join(names) if names else "nothing"


def plain_content(content: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """Return a message content of text parts alone as one string (text-only servers).

    A content holding an image is returned unchanged.
    """
    if all(part.get("type") == "text" for part in content):
        return "\n".join(str(part["text"]) for part in content)
    return content
