"""``mllm-rescue``: a multimodal model walks a rescue mission with discrete commands.

Each time the previous command is done, the model gets the clue text and reference image, the
current view, the phase (toward the casualty, or toward the stretcher once it carries them),
what happened since its last command, and its memory of recent (what it saw, what it did)
pairs. It answers its reasoning, what it sees and one command, which the agent carries out as
continuous ``Move``/``Interact`` actions over as many control periods as needed: at most
1.5 m/s and 30 degrees per 0.2 s step, ``forward`` (1 m) takes 4 steps at 1.25 m/s, ``back``
(0.5 m) 2 steps, a 30 degree turn one. A contact ends a walking command early.
"""

from __future__ import annotations

import json
import math
from collections import deque
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model, field_validator

from sortie.agents.mllm.common import (
    ModelAgent,
    ObservationMode,
    as_flag,
    as_float,
    as_int,
    as_mode,
    objects_text,
    plain_content,
    seen_classes,
)
from sortie.core.actions import Action, Interact, Interaction, InvalidAction, Move
from sortie.core.observation import Brief, Event, EventKind, MissionObservation, Sensor
from sortie.models.client import Reply

Command = Literal[
    "forward", "back", "turn_left", "turn_right", "look_up", "look_down", "stay", "grab", "drop"
]
FORWARD_M, BACK_M, TURN_DEG, PITCH_STEP, PITCH_MAX = 1.0, 0.5, 30.0, 30.0, 30.0
REASONING_EXAMPLE = "The corridor ahead is clear; the clue says the garage."
SEEN_EXAMPLE = "a corridor with a door on the left"
EXAMPLES = frozenset({REASONING_EXAMPLE, SEEN_EXAMPLE})
"""The example answer's free text: an answer that repeats it copied the prompt (an echo)."""


class _Answer(BaseModel):
    """Accepts the command in any case and with spaces (``Turn Left``)."""

    @field_validator("command", mode="before", check_fields=False)
    @classmethod
    def _plain(cls, value: Any) -> Any:
        return value.strip().lower().replace(" ", "_") if isinstance(value, str) else value


def answer_schema(reasoning: bool) -> type[BaseModel]:
    """Return the answer's schema, with or without the reasoning field (an ablation)."""
    fields: dict[str, Any] = {}
    if reasoning:
        fields["reasoning"] = (str, Field(description="why this command, briefly"))
    fields["seen"] = (str, Field(description="what you see now, in a few words"))
    fields["command"] = (Command, Field(description="the one command to carry out"))
    name = "RescueAnswer" if reasoning else "RescueAnswerNoReasoning"
    return create_model(name, __base__=_Answer, **fields)


class MllmRescueAgent(ModelAgent):
    """Asks a multimodal model for one discrete command at a time and walks it out."""

    name = "mllm-rescue"
    families = frozenset({"rescue"})
    sensors: frozenset[Sensor] = frozenset({Sensor.RGB})
    templates = ("rescue_system.txt", "rescue_step.txt")

    def __init__(
        self,
        temperature: float | str = 0.0,
        resolution: int | str = 256,
        history: int | str = 8,
        reasoning: bool | str = True,
        prompt_dir: str | None = None,
        image_format: str = "png",
        max_speed: float | str = 1.5,
        max_turn: float | str = 30.0,
        observation: str = ObservationMode.IMAGES,
        **model_args: Any,
    ) -> None:
        """Configure the agent; nothing is contacted until the first step.

        Args:
            temperature: sampling temperature.
            resolution: longer side of the images sent, pixels (0: as rendered).
            history: how many (seen, command) pairs the model is reminded of.
            reasoning: ask for a reasoning field (False: the no-reasoning ablation).
            prompt_dir: folder with your own ``rescue_system.txt`` and ``rescue_step.txt``.
            image_format: ``png`` (lossless, default) or ``jpeg``.
            max_speed: walking speed limit of the mission, m/s.
            max_turn: turn limit per step of the mission, degrees.
            observation: ``images`` (default), or ``text``: the classes the semantic
                camera shows instead of the images (and no reference picture), sent as
                plain text, for models without vision.
            **model_args: model client settings (``model``, ``base_url``, ``cache``,
                ``replay``, ``timeout``, ``max_retries``, ``backoff``, ...); see
                ``sortie.models.ModelConfig``. Never the API key: that comes from the
                environment.
        """
        super().__init__(
            prompt_dir, resolution, image_format, {**model_args, "temperature": temperature}
        )
        self.history = as_int("history", history)
        self.reasoning = as_flag("reasoning", reasoning)
        self.max_speed, self.max_turn = (
            as_float("max_speed", max_speed),
            as_float("max_turn", max_turn),
        )
        self.schema = answer_schema(self.reasoning)
        self.mode = as_mode(observation)
        self.sensors = frozenset(
            {Sensor.SEMANTIC if self.mode is ObservationMode.TEXT else Sensor.RGB}
        )
        self._setup(Brief("rescue", "", ""))

    def _setup(self, brief: Brief) -> None:
        self.brief = brief
        self.memory: deque[tuple[str, str]] = deque(maxlen=max(self.history, 1))
        self._queue: deque[Action] = deque()
        self._events: list[Event] = []
        self._pitch = 0.0

    def reset(self, brief: Brief, seed: int) -> None:
        """Start an episode: empty memory, level camera, templates recorded at the first call."""
        self._setup(brief)
        self.start_episode()

    def act(self, observation: MissionObservation) -> Action:
        """Carry on with the current command, or ask the model for the next one."""
        self._events.extend(observation.events)
        if any(e.kind is EventKind.CONTACT for e in observation.events):
            self._queue.clear()  # a blocked walk is over: look again before going on
        if self._queue:
            self.note(None)
            return self._queue.popleft()
        reply = self.ask(self._messages(observation), self.schema, examples=EXAMPLES)
        self.note(reply)
        self._events = []
        return self._execute(reply)

    # --- the request ------------------------------------------------------------------
    def _messages(self, observation: MissionObservation) -> list[dict[str, Any]]:
        system = self.prompts.render("rescue_system.txt", fields=self._fields_text())
        text = self.prompts.render(
            "rescue_step.txt",
            clue=self.brief.clue or self.brief.text,
            phase="back to the stretcher, carrying the casualty"
            if observation.carrying
            else "toward the casualty",
            time_left=f"{observation.time_left:.0f}",
            events=_describe(self._events),
            memory=self._memory_text(),
        )
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        if self.mode is ObservationMode.TEXT:
            seen = seen_classes(observation.frames.semantic, self.brief.semantic_classes)
            content.append({"type": "text", "text": f"Your camera sees: {objects_text(seen)}"})
            return [
                {"role": "system", "content": system},
                {"role": "user", "content": plain_content(content)},
            ]
        reference = self.brief.images.get("reference")
        if reference is not None:
            content += [
                {"type": "text", "text": "Reference picture from the clue:"},
                self.image(reference),
            ]
        if observation.frames.rgb is not None:
            content += [
                {"type": "text", "text": "Your current view:"},
                self.image(observation.frames.rgb),
            ]
        return [{"role": "system", "content": system}, {"role": "user", "content": content}]

    def _fields_text(self) -> str:
        fields = ("reasoning (why, briefly), " if self.reasoning else "") + (
            "seen (what you see now, in a few words) and command (one of the commands above)"
        )
        example = {
            **({"reasoning": REASONING_EXAMPLE} if self.reasoning else {}),
            "seen": SEEN_EXAMPLE,
            "command": "forward",
        }
        # A concrete answer, not placeholders: a weak model copies what it is shown.
        return f"Answer with a JSON object with the fields {fields}, e.g. {json.dumps(example)}."

    def _memory_text(self) -> str:
        if self.history <= 0 or not self.memory:
            return "(nothing yet)"
        return "\n".join(f"- {seen} -> {command}" for seen, command in self.memory)

    # --- the command ------------------------------------------------------------------
    def _execute(self, reply: Reply) -> Action:
        if reply.value is None:
            self.memory.append(("(an answer that could not be read)", "nothing"))
            return InvalidAction(reply.text, reply.error or "no answer")
        answer = reply.value.model_dump()
        command = str(answer["command"])
        self.memory.append((str(answer["seen"]).strip()[:200], command))
        self._queue.extend(self._actions(command))
        return self._queue.popleft()

    def _actions(self, command: str) -> list[Action]:
        """Return the control steps that carry out ``command``."""
        dt = self.brief.control_period or 0.2
        if command in ("forward", "back"):
            distance = FORWARD_M if command == "forward" else -BACK_M
            steps = math.ceil(abs(distance) / (self.max_speed * dt) - 1e-9)
            return [Move(0.0, distance / (steps * dt))] * steps
        if command in ("turn_left", "turn_right"):
            steps = math.ceil(TURN_DEG / self.max_turn - 1e-9)
            turn = TURN_DEG / steps if command == "turn_left" else -TURN_DEG / steps
            return [Move(turn, 0.0)] * steps
        if command in ("look_up", "look_down"):
            step = PITCH_STEP if command == "look_up" else -PITCH_STEP
            self._pitch = max(-PITCH_MAX, min(PITCH_MAX, self._pitch + step))
            return [Move(0.0, 0.0, self._pitch)]
        if command in ("grab", "drop"):
            return [Interact(Interaction.GRAB if command == "grab" else Interaction.DROP)]
        return [Move()]


def _describe(events: list[Event]) -> str:
    """Return what happened since the last command, in words the model can use."""
    words = {
        EventKind.CONTACT: "you bumped into something",
        EventKind.PICKED_UP: "you picked up the casualty",
        EventKind.DROPPED: "you put the casualty down",
        EventKind.DOOR_OPENED: "a door opened",
        EventKind.INTERACTION_FAILED: "an interaction failed",
        EventKind.INVALID_ACTION: "your last answer could not be used",
    }
    said = [
        words[EventKind(e.kind)]
        + (f" ({e.detail})" if e.kind is EventKind.INTERACTION_FAILED and e.detail else "")
        for e in events
        if e.kind in words
    ]
    return "; ".join(dict.fromkeys(said)) or "nothing special"
