"""``homiebot``: a multimodal model plans household tasks subtask by subtask (EMMOE's HomieBot).

Each round the model gets the four views of the head camera (front, left, back, right, labelled
in that order), the task, the inventory, the execution history (``(k) pick, apple (success)``
with the skill), the executor's last feedback, and the offered actions and skills. It answers
``{analysis, subtask: {action, target, place}, skill}`` as JSON with a schema; EMMOE's plain
form (``Analysis: ... Subtask: [Pick, apple] Model: grasp``, ``[Put, apple, fridge]``,
``[End]``) is read too. An answer that cannot be read is re-asked, saying what was wrong, up
to ``reasks`` times; then the round is ``end``, as in EMMOE. The words of a readable answer go
to the executor as written: an unknown action, skill or object is its F1 or F2, not a crash.

The conversation is the system prompt, the last ``window`` rounds (their text and answers:
earlier images are not sent again) and the current round. Ablations: ``images=false``,
``feedback=false``, ``history=N``, ``analysis=false`` and ``observation=text`` (per view, the
names of the things the camera shows instead of the images; the request is then plain text).
"""

from __future__ import annotations

import re
from collections import deque
from typing import Any

from pydantic import BaseModel, Field, create_model, field_validator

from sortie.agents.mllm.common import (
    ModelAgent,
    ObservationMode,
    as_flag,
    as_int,
    as_mode,
    objects_text,
    plain_content,
)
from sortie.core.actions import Action, Subtask
from sortie.core.errors import ParameterError
from sortie.core.household import MAX_ROUNDS, RoundRecord, RoundStatus, Verb
from sortie.core.observation import (
    VIEW_NAMES,
    Brief,
    HouseholdObservation,
    MissionObservation,
    Sensor,
)
from sortie.models.client import Reply
from sortie.models.structured import extract_json

Message = dict[str, Any]
REASKS = 5
"""Re-asks of an unreadable answer before the round becomes ``end`` (EMMOE's five)."""
ECHO = 1000
"""Longest unreadable answer echoed back to the model in a re-ask."""
_SUBTASK = re.compile(r"subtask\s*:\s*\[([^\]]*)\]", re.I)
_SKILL = re.compile(r"(?:model|skill)\s*:\s*\[?([^\]\n]*)", re.I)
_ANALYSIS = re.compile(r"analysis\s*:\s*(.*?)\s*(?=subtask\s*:|\Z)", re.I | re.S)
_PLAIN_FORM = "Analysis: ... Subtask: [Action, target] or [Put, item, place] Model: skill"


class PlannedSubtask(BaseModel):
    """The subtask of an answer, in the model's words (null target or place: none)."""

    action: str = Field(description="one of the offered actions")
    target: str = Field(default="", description="the object, furniture or room (empty for end)")
    place: str | None = Field(default=None, description="for put: where the item goes; else null")

    @field_validator("target", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return "" if value is None else value


def answer_schema(analysis: bool) -> type[BaseModel]:
    """Return the answer's schema, with or without the analysis field (an ablation)."""
    fields: dict[str, Any] = {}
    if analysis:
        fields["analysis"] = (str, Field(description="what you see and why this subtask"))
    fields["subtask"] = (PlannedSubtask, Field(description="the one subtask to carry out"))
    fields["skill"] = (str, Field(default="", description="the offered skill (empty for end)"))
    name = "HouseholdAnswer" if analysis else "HouseholdAnswerNoAnalysis"
    return create_model(name, **fields)


def parse_answer(text: str) -> Any:
    """Return an answer as data: a JSON object, else EMMOE's plain form.

    JSON without a subtask (braces inside a plain answer's analysis, say) gives way to the
    plain form when there is one.

    Raises:
        ValueError: the text is neither.
    """
    try:
        data = extract_json(text)
    except ValueError:
        return parse_plain(text)
    if (isinstance(data, dict) and "subtask" in data) or not _SUBTASK.search(text):
        return data
    return parse_plain(text)


def parse_plain(text: str) -> dict[str, Any]:
    """Return EMMOE's ``Analysis: ... Subtask: [Pick, apple] Model: grasp`` as answer data.

    Raises:
        ValueError: no ``Subtask: [...]``, or one of more than three parts.
    """
    found = _SUBTASK.search(text)
    if found is None:
        raise ValueError(f"neither a JSON object nor the plain form {_PLAIN_FORM!r}")
    words = [word.strip() for word in found.group(1).split(",")]
    if len(words) > 3:
        raise ValueError(
            f"Subtask [{found.group(1)}] has {len(words)} parts; expected [action], "
            f"[action, target] or [action, target, place]"
        )
    action, target, place = (*words, "", "")[:3]
    skill = _SKILL.search(text, found.end())
    analysis = _ANALYSIS.search(text)
    return {
        "analysis": analysis.group(1) if analysis else "",
        "subtask": {"action": action, "target": target, "place": place or None},
        "skill": skill.group(1).strip() if skill else "",
    }


def history_line(record: RoundRecord) -> str:
    """Return one round as EMMOE writes it: ``(k) Action, obj[, place] (success|fail)``."""
    words = ", ".join(w for w in (record.action, record.target, record.place or "") if w)
    outcome = {RoundStatus.SUCCESS: "success", RoundStatus.FAILURE: "fail"}.get(
        record.status, record.status.value
    )
    skill = f" - skill: {record.skill}" if record.skill else ""
    return f"({record.round}) {words} ({outcome}){skill}"


class HomieBotAgent(ModelAgent):
    """Asks a multimodal model for one subtask and skill per household round."""

    name = "homiebot"
    families = frozenset({"household"})
    sensors: frozenset[Sensor] = frozenset({Sensor.RGB})
    templates = ("household_system.txt", "household_step.txt")

    def __init__(
        self,
        temperature: float | str = 0.0,
        resolution: int | str = 256,
        window: int | str = 3,
        history: int | str = MAX_ROUNDS,
        images: bool | str = True,
        feedback: bool | str = True,
        analysis: bool | str = True,
        observation: str = ObservationMode.IMAGES,
        reasks: int | str = REASKS,
        prompt_dir: str | None = None,
        image_format: str = "png",
        **model_args: Any,
    ) -> None:
        """Configure the agent; nothing is contacted until the first round.

        Args:
            temperature: sampling temperature.
            resolution: longer side of the images sent, pixels (0: as rendered).
            window: earlier rounds kept in the conversation (their text and answers).
            history: rounds of execution history written into each request (0: none).
            images: send the four views (False: the no-image ablation).
            feedback: show the executor's last feedback (False: the no-feedback ablation).
            analysis: ask for an analysis field (False: the no-analysis ablation).
            observation: ``images`` (default), or ``text``: per view the names of the
                things the camera shows instead of the images, sent as plain text.
            reasks: re-asks of an unreadable answer before the round becomes ``end``.
            prompt_dir: folder with your own ``household_system.txt`` and
                ``household_step.txt``.
            image_format: ``png`` (lossless, default) or ``jpeg``.
            **model_args: model client settings, as for ``mllm-rescue``.

        Raises:
            ParameterError: an argument of the wrong type or a negative count.
        """
        super().__init__(
            prompt_dir, resolution, image_format, {**model_args, "temperature": temperature}
        )
        self.window, self.history = as_count("window", window), as_count("history", history)
        self.reasks = as_count("reasks", reasks)
        self.images, self.feedback = as_flag("images", images), as_flag("feedback", feedback)
        self.analysis = as_flag("analysis", analysis)
        self.mode = as_mode(observation)
        self.schema = answer_schema(self.analysis)
        self.sensors = frozenset({Sensor.RGB}) if self.shows_images else frozenset()
        self._setup(Brief("household", "", ""))

    @property
    def shows_images(self) -> bool:
        """Return whether the requests carry the four images."""
        return self.images and self.mode is ObservationMode.IMAGES

    def _setup(self, brief: Brief) -> None:
        self.brief = brief
        self.turns: deque[tuple[Message, str]] = deque(maxlen=self.window)

    def reset(self, brief: Brief, seed: int) -> None:
        """Start an episode: an empty conversation; templates recorded at the first call."""
        self._setup(brief)
        self.start_episode()

    def act(self, observation: MissionObservation) -> Action:
        """Ask the model for the next subtask; ``end`` if no readable answer comes."""
        if not isinstance(observation, HouseholdObservation):
            raise ParameterError("homiebot plays household missions only")
        step = {"role": "user", "content": self._content(observation)}
        reply, answer = self._ask(step)
        self.note(reply)
        if reply.value is None:
            return Subtask(Verb.END.value, "", "")
        self.turns.append((_without_images(step), answer))
        return _subtask(reply.value)

    # --- the request ------------------------------------------------------------------
    def _system(self) -> Message:
        actions = ", ".join(self.brief.actions or [v.value for v in Verb])
        skills = "\n".join(f"- {name}: {role}" for name, role in self.brief.skills)
        text = self.prompts.render(
            "household_system.txt",
            actions=actions,
            skills=skills or "- (none offered)",
            fields=self._fields_text(),
        )
        return {"role": "system", "content": text}

    def _fields_text(self) -> str:
        analysis = '"analysis": "what you see and why", ' if self.analysis else ""
        return (
            f'Answer with one JSON object: {{{analysis}"subtask": {{"action": "...", '
            f'"target": "...", "place": "..." or null}}, "skill": "..."}}. The plain form '
            f"{_PLAIN_FORM!r} is read too."
        )

    def _content(self, observation: HouseholdObservation) -> str | list[Message]:
        text = self.prompts.render(
            "household_step.txt",
            task=observation.task or self.brief.text,
            round=observation.round + 1,
            rounds_left=observation.rounds_left,
            inventory=objects_text(observation.inventory),
            history=self._history_text(observation.history),
            feedback=self._feedback_text(observation),
            views=self._views_text(observation),
        )
        parts: list[Message] = [{"type": "text", "text": re.sub(r"\n{3,}", "\n\n", text)}]
        if self.shows_images:
            for name, frames in zip(VIEW_NAMES, observation.views, strict=False):
                if frames.rgb is not None:
                    parts += [{"type": "text", "text": f"{name}:"}, self.image(frames.rgb)]
        return plain_content(parts)

    def _history_text(self, history: tuple[Any, ...]) -> str:
        if self.history == 0:
            return "(not shown)"
        lines = [history_line(r) for r in history[-self.history :] if isinstance(r, RoundRecord)]
        return "\n".join(lines) or "(nothing yet)"

    def _feedback_text(self, observation: HouseholdObservation) -> str:
        if not self.feedback:
            return ""
        code = f" (error {observation.code})" if observation.code else ""
        return f"Feedback on the last subtask: {observation.feedback or 'none yet'}{code}"

    def _views_text(self, observation: HouseholdObservation) -> str:
        if self.mode is ObservationMode.TEXT:
            lines = [
                f"- {name}: {objects_text(names)}"
                for name, names in zip(VIEW_NAMES, observation.detections, strict=False)
            ]
            return "What the head camera sees, per view:\n" + "\n".join(lines)
        if self.shows_images:
            return f"The head camera's four views follow: {', '.join(VIEW_NAMES)}."
        return ""

    # --- asking and re-asking ---------------------------------------------------------
    def _ask(self, step: Message) -> tuple[Reply, str]:
        """Ask, re-asking an unreadable answer.

        Return every attempt's text and calls, and the text of the answer used ("" if none).
        """
        messages = [self._system(), *self._window(), step]
        texts: list[str] = []
        calls: list[Any] = []
        for attempt in range(self.reasks + 1):
            reply = self.client.ask(messages, self.schema, parse_answer, revalidate=False)
            texts.append(reply.text)
            calls += reply.calls
            if reply.value is not None:
                return Reply(_attempts_text(texts), tuple(calls), reply.value), reply.text
            error = reply.error or "no answer"
            texts[-1] = f"{reply.text}\n[attempt {attempt + 1} refused: {error}]"
            messages = [*messages, *self._reask(reply.text, error, attempt + 1)]
        texts.append(f"[no readable answer in {self.reasks + 1} attempts: the round is end]")
        return Reply(_attempts_text(texts), tuple(calls), None, error), ""

    def _window(self) -> list[Message]:
        return [
            message
            for step, answer in self.turns
            for message in (step, {"role": "assistant", "content": answer})
        ]

    def _reask(self, text: str, error: str, number: int) -> list[Message]:
        echo = text if len(text) <= ECHO else text[:ECHO] + " [cut]"
        ask = (
            f"Your answer could not be used: {error}. {self._fields_text()} "
            f"(Re-ask {number} of {self.reasks}.)"
        )
        return [
            {"role": "assistant", "content": echo or "(an empty answer)"},
            {"role": "user", "content": ask},
        ]


def as_count(name: str, raw: int | str) -> int:
    """Return an agent argument as a count (an int of at least 0)."""
    value = as_int(name, raw)
    if value < 0:
        raise ParameterError(f"agent argument {name}: expected 0 or more, got {value}")
    return value


def _attempts_text(texts: list[str]) -> str:
    if len(texts) == 1:
        return texts[0]
    return "\n\n".join(f"--- attempt {i + 1} ---\n{text}" for i, text in enumerate(texts))


def _without_images(step: Message) -> Message:
    """Return a round's request as kept in the conversation: its text, not its images."""
    content = step["content"]
    if isinstance(content, str):
        return step
    text = content[0]["text"]
    return {"role": "user", "content": f"{text}\n(the images of this round are not sent again)"}


def _subtask(answer: BaseModel) -> Subtask:
    """Return the subtask an answer names, in its words (the executor judges them)."""
    data = answer.model_dump()
    planned = data["subtask"]
    place = (planned.get("place") or "").strip() or None
    return Subtask(
        str(planned["action"]).strip(),
        str(planned["target"]).strip(),
        str(data.get("skill") or "").strip(),
        place,
    )
