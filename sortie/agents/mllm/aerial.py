"""``mllm-aerial``: a multimodal model flies a mission with structured primitives.

MissionBench-style: each step the model gets the instruction, the current image and up to H
earlier ones, its action history and the steps left, and answers a target box (0-1000, or
none), its reasoning, one action with a magnitude, a report and a done flag. JSON with a
schema by default; MissionBench's XML-tag format (``<bbox>``, ``<reasoning>``, ``<action>``,
``<report>``, ``<done>``) is read too. ``prompt=missionbench`` writes MissionBench's own step
prompt instead (``sortie.agents.mllm.missionbench``): camera, pose and yaw, d_max, the budget
and the history with its clamps, images newest first.
"""

from __future__ import annotations

import json
import re
from collections import deque
from typing import Annotated, Any, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, Field, create_model, field_validator

from sortie.agents.mllm.common import (
    ModelAgent,
    ObservationMode,
    as_flag,
    as_int,
    as_mode,
    objects_text,
    plain_content,
    seen_classes,
)
from sortie.agents.mllm.missionbench import (
    EXAMPLE_REASONINGS,
    AnswerShape,
    PromptStyle,
    action_text,
    as_style,
    step_values,
    with_clamp,
)
from sortie.core.actions import Action, FlightPrimitive, Fly, InvalidAction
from sortie.core.observation import Brief, MissionObservation, Sensor
from sortie.missions.aerial.vocabulary import TaskAction, TaskActionKind
from sortie.models.client import Reply
from sortie.models.structured import extract_json

ActionName = Literal[
    "forward",
    "backward",
    "left",
    "right",
    "up",
    "down",
    "turn_left",
    "turn_right",
    "land",
    "drop_payload",
    "collect_sample",
]
REASONING_EXAMPLE = "The red car is ahead and below; I fly closer."
EXAMPLES = frozenset({REASONING_EXAMPLE})
"""The example answer's free text: an answer that repeats it copied the prompt (an echo)."""
_TAG = re.compile(r"<(\w+)>(.*?)</\1>", re.S)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


class _Answer(BaseModel):
    """Accepts the action in any case and with spaces (``Turn Left``)."""

    @field_validator("action", mode="before", check_fields=False)
    @classmethod
    def _plain(cls, value: Any) -> Any:
        return value.strip().lower().replace(" ", "_") if isinstance(value, str) else value


Box = list[Annotated[int, Field(ge=0, le=1000)]] | None
"""A target box in 0–1000 image coordinates: a corner outside them is a format error."""


def answer_schema(box: bool, reasoning: bool) -> type[BaseModel]:
    """Return the answer's schema with the fields asked for (box and reasoning can be left out)."""
    fields: dict[str, Any] = {}
    if box:
        fields["box"] = (
            Box,
            Field(
                description="target box [x1, y1, x2, y2] in 0-1000 "
                "image coordinates, or null if not visible",
                min_length=4,
                max_length=4,
            ),
        )
    if reasoning:
        fields["reasoning"] = (str, Field(description="why this action, briefly"))
    fields["action"] = (ActionName, Field(description="one action"))
    fields["magnitude"] = (float, Field(0.0, ge=0.0, description="metres, or degrees for turns"))
    fields["report"] = (str | None, Field(None, description="what the mission asks to report"))
    fields["done"] = (bool, Field(False, description="true when the mission is complete"))
    name = "AerialAnswer" + ("" if box else "NoBox") + ("" if reasoning else "NoReasoning")
    return create_model(name, __base__=_Answer, **fields)


def parse_answer(text: str) -> Any:
    """Return the answer as data: JSON if it is JSON, else MissionBench's XML tags."""
    try:
        return extract_json(text)
    except ValueError:
        pass
    tags = {name.lower(): value.strip() for name, value in _TAG.findall(text)}
    if "action" not in tags and "done" not in tags:
        raise ValueError("neither a JSON object nor <action>/<done> tags")
    return _from_tags(tags)


def _from_tags(tags: dict[str, str]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    box = tags.get("bbox", tags.get("box"))
    if box is not None:
        numbers = _NUMBER.findall(box)
        data["box"] = [round(float(n)) for n in numbers] if numbers else None
    for name in ("reasoning", "thinking", "think"):
        if name in tags:
            data["reasoning"] = tags[name]
            break
    words = tags.get("action", "").split()
    done = tags.get("done", "").lower() in ("true", "yes", "1")
    if words and words[0].lower() == "done":
        done, words = True, []
    data["action"] = "_".join(w for w in words if not _NUMBER.fullmatch(w)) or "up"
    magnitude = tags.get("magnitude") or next((w for w in words if _NUMBER.fullmatch(w)), "0")
    data["magnitude"] = float(magnitude)
    report = tags.get("report", "")
    data["report"] = None if report.lower() in ("", "none", "null", "n/a") else report
    data["done"] = done
    return data


class MllmAerialAgent(ModelAgent):
    """Asks a multimodal model for one flight primitive (or task action) per step."""

    name = "mllm-aerial"
    families = frozenset({"aerial"})
    sensors: frozenset[Sensor] = frozenset({Sensor.RGB})
    templates: tuple[str, ...] = ("aerial_system.txt", "aerial_step.txt")
    TEMPLATES: dict[PromptStyle, tuple[str, ...]] = {
        PromptStyle.SORTIE: ("aerial_system.txt", "aerial_step.txt"),
        PromptStyle.MISSIONBENCH: ("missionbench_step.txt",),
    }
    """The templates of each prompt style."""

    def __init__(
        self,
        temperature: float | str = 0.0,
        resolution: int | str | None = None,
        history: int | str = 2,
        box: bool | str = True,
        reasoning: bool | str = True,
        prompt_dir: str | None = None,
        image_format: str = "png",
        observation: str = ObservationMode.IMAGES,
        prompt: str = PromptStyle.SORTIE,
        **model_args: Any,
    ) -> None:
        """Configure the agent; nothing is contacted until the first step.

        Args:
            temperature: sampling temperature.
            resolution: longer side of the images sent, pixels (0: as rendered); None: 512
                with sortie's prompt, as rendered with MissionBench's (the run's
                ``--camera`` decides the size, as MissionBench's resolution ablation does).
            history: how many earlier images go with the current one (H).
            box: ask for the target's box (False: the no-box ablation).
            reasoning: ask for reasoning (False: the no-reasoning ablation).
            prompt_dir: folder with your own ``aerial_system.txt`` and ``aerial_step.txt``.
            image_format: ``png`` (lossless, default) or ``jpeg``.
            observation: ``images`` (default), or ``text``: the classes the semantic
                camera shows instead of each image, sent as plain text.
            prompt: ``sortie`` (default): sortie's prompt (``aerial_system.txt``,
                ``aerial_step.txt``); ``missionbench``: MissionBench's step prompt
                (``missionbench_step.txt``), which also reads the pose sensor.
            **model_args: model client settings, as for ``mllm-rescue``.
        """
        self.style = as_style(prompt)
        self.templates = self.TEMPLATES[self.style]
        mission_bench = self.style is PromptStyle.MISSIONBENCH
        if resolution is None:
            resolution = 0 if mission_bench else 512
        super().__init__(
            prompt_dir, resolution, image_format, {**model_args, "temperature": temperature}
        )
        self.history = as_int("history", history)
        self.box, self.reasoning = as_flag("box", box), as_flag("reasoning", reasoning)
        self.schema = answer_schema(self.box, self.reasoning)
        self.examples = EXAMPLES | (frozenset(EXAMPLE_REASONINGS) if mission_bench else frozenset())
        self.mode = as_mode(observation)
        camera = Sensor.SEMANTIC if self.mode is ObservationMode.TEXT else Sensor.RGB
        self.sensors = frozenset({camera, *([Sensor.POSE] if mission_bench else [])})
        self._setup(Brief("aerial", "", ""))

    def _setup(self, brief: Brief) -> None:
        self.brief = brief
        self.images: deque[NDArray[np.uint8]] = deque(maxlen=max(self.history, 1))
        self.seen: deque[list[str]] = deque(maxlen=max(self.history, 1))
        """In text mode, what each earlier view showed (instead of ``images``)."""
        self.actions: list[str] = []
        self.report: str | None = None
        """The last report the model gave (read by the mission's judge when it ends)."""
        self.last_box: list[int] | None = None

    def reset(self, brief: Brief, seed: int) -> None:
        """Start an episode: no images, no history; templates recorded at the first call."""
        self._setup(brief)
        self.start_episode()

    def act(self, observation: MissionObservation) -> Action:
        """Ask the model for the next action and return it."""
        if self.style is PromptStyle.MISSIONBENCH and self.actions:
            self.actions[-1] = with_clamp(self.actions[-1], observation.events)
        reply = self.ask(
            self._messages(observation), self.schema, parse_answer, examples=self.examples
        )
        self.note(reply)
        if observation.frames.rgb is not None and self.history > 0:
            self.images.append(observation.frames.rgb)
        if self.mode is ObservationMode.TEXT and self.history > 0:
            self.seen.append(self._seen(observation))
        return self._execute(reply)

    def _messages(self, observation: MissionObservation) -> list[dict[str, Any]]:
        if self.style is PromptStyle.MISSIONBENCH:
            return self._missionbench_messages(observation)
        system = self.prompts.render("aerial_system.txt", fields=self._fields_text())
        history = "\n".join(f"{i + 1}. {a}" for i, a in enumerate(self.actions))
        text = self.prompts.render(
            "aerial_step.txt",
            instruction=self.brief.text,
            steps_left=_steps_left(self.brief, observation),
            history=history or "(none yet)",
        )
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        if self.mode is ObservationMode.TEXT:
            content += self._seen_parts(observation)
            return [
                {"role": "system", "content": system},
                {"role": "user", "content": plain_content(content)},
            ]
        earlier = list(self.images)[-self.history :] if self.history > 0 else []
        for age, rgb in zip(range(len(earlier), 0, -1), earlier, strict=True):
            content += [{"type": "text", "text": f"View {age} step(s) ago:"}, self.image(rgb)]
        if observation.frames.rgb is not None:
            content += [
                {"type": "text", "text": "Current view:"},
                self.image(observation.frames.rgb),
            ]
        return [{"role": "system", "content": system}, {"role": "user", "content": content}]

    def _missionbench_messages(self, observation: MissionObservation) -> list[dict[str, Any]]:
        """Return MissionBench's step prompt, then the images newest first (no system prompt).

        MissionBench's step-by-step prompt is sent alone, as one user message, so here too.
        """
        shape = AnswerShape(self.box, self.reasoning)
        text = self.prompts.render(
            "missionbench_step.txt",
            **step_values(self.brief, observation, self.actions),
            fields=shape.fields_text(),
            examples=shape.examples_text(self.brief.limits.max_move),
        )
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        if self.mode is ObservationMode.TEXT:
            content += self._seen_parts(observation)
            return [{"role": "user", "content": plain_content(content)}]
        earlier = list(self.images)[-self.history :] if self.history > 0 else []
        views = [(f"view {age} step(s) ago", rgb) for age, rgb in enumerate(reversed(earlier), 1)]
        if observation.frames.rgb is not None:
            views.insert(0, ("current view", observation.frames.rgb))
        for index, (label, rgb) in enumerate(views, start=1):
            content += [{"type": "text", "text": f"<image{index}>: {label}"}, self.image(rgb)]
        return [{"role": "user", "content": content}]

    def _seen(self, observation: MissionObservation) -> list[str]:
        return seen_classes(observation.frames.semantic, self.brief.semantic_classes)

    def _seen_parts(self, observation: MissionObservation) -> list[dict[str, Any]]:
        """Return the text observation: what earlier views and the current one show."""
        earlier = list(self.seen)[-self.history :] if self.history > 0 else []
        lines = [
            f"View {age} step(s) ago shows: {objects_text(names)}"
            for age, names in zip(range(len(earlier), 0, -1), earlier, strict=True)
        ]
        lines.insert(0, "No images are sent: what the views show follows instead, as classes.")
        lines.append(f"Current view shows: {objects_text(self._seen(observation))}")
        return [{"type": "text", "text": line} for line in lines]

    def _fields_text(self) -> str:
        names = (
            (["box (target box [x1, y1, x2, y2] in 0-1000, or null)"] if self.box else [])
            + (["reasoning"] if self.reasoning else [])
            + ["action", "magnitude", "report (or null)", "done (true or false)"]
        )
        example = {
            **({"box": [412, 380, 530, 455]} if self.box else {}),
            **({"reasoning": REASONING_EXAMPLE} if self.reasoning else {}),
            "action": "forward",
            "magnitude": 10,
            "report": None,
            "done": False,
        }
        # A concrete answer, not placeholders: a weak model copies what it is shown.
        return (
            f"Answer with a JSON object with the fields {', '.join(names)}, "
            f"e.g. {json.dumps(example)}."
        )

    def _execute(self, reply: Reply) -> Action:
        answer = reply.value
        if answer is None:
            self.actions.append("(unreadable answer)")
            return InvalidAction(reply.text, reply.error or "no answer")
        data = answer.model_dump()
        self.last_box = data.get("box")
        self.report = data.get("report") or self.report
        if data["done"]:
            self.actions.append("done")
            return TaskAction(TaskActionKind.DONE, report=self.report)
        if self.style is PromptStyle.MISSIONBENCH:
            self.actions.append(action_text(data["action"], data["magnitude"]))
        else:
            self.actions.append(f"{data['action']} {data['magnitude']:g}")
        if data["action"] in FlightPrimitive.__members__.values():
            return Fly(FlightPrimitive(data["action"]), float(data["magnitude"]), self.report)
        return TaskAction(TaskActionKind(data["action"]), report=self.report)


def _steps_left(brief: Brief, observation: MissionObservation) -> str:
    """Return the steps left as text, from the time left and the control period."""
    if brief.control_period <= 0 or observation.time_left <= 0:
        return "unknown"
    return str(round(observation.time_left / brief.control_period))
