"""``homiebot``: a multimodal model plans household tasks subtask by subtask (EMMOE's HomieBot).

Each round the model gets the four views of the head camera (front, left, back, right, labelled
in that order), the task, the inventory, the execution history (``(k) pick, apple (success)``
with the skill), the executor's last feedback, and the offered actions and skills. It answers
``{analysis, subtask: {action, target, place}, skill}`` as JSON with a schema; EMMOE's plain
form (``Analysis: ... Subtask: [Pick, apple] Model: grasp``, ``[Put, apple, fridge]``,
``[End]``) is read too. An answer that cannot be read is re-asked, saying what was wrong, up
to ``reasks`` times (4: five attempts in all, as EMMOE samples five); then the agent gives an
``InvalidAction`` and the episode ends as ``no_answer``: EMMOE stops there and records no round,
so it is never scored as the planner's ``end``. The words of a readable answer go
to the executor as written: an unknown action, skill or object is its F1 or F2, not a crash.

The conversation is the system prompt, the last ``window`` rounds (their text and answers:
earlier images are not sent again) and the current round. Ablations: ``images=false``,
``feedback=false``, ``history=N``, ``analysis=false`` and ``observation=text`` (per view, the
names of the things the camera shows instead of the images; the request is then plain text).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from sortie.agents.mllm.common import ModelAgent
from sortie.agents.mllm.household_prompts import (
    HouseholdPrompter,
    Message,
    PromptSettings,
    as_count,
    parse_answer,
)
from sortie.core.actions import Action, InvalidAction
from sortie.core.errors import ParameterError
from sortie.core.observation import Brief, MissionObservation, Sensor
from sortie.missions.household.observation import HouseholdObservation
from sortie.missions.household.records import MAX_ROUNDS
from sortie.missions.household.vocabulary import Subtask
from sortie.models.client import REASK_ECHO, Reply

REASKS = 4
"""Re-asks of an unreadable answer before the agent gives up: five attempts, as EMMOE samples."""


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
        observation: str = "images",
        reasks: int | str = REASKS,
        examples: int | str = 0,
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
            reasks: re-asks of an unreadable answer before the agent gives up (``no_answer``).
            examples: expert rounds of household-v1 train tasks shown first, never of the
                task being played (EMMOE gives weaker models examples); 0: none.
            prompt_dir: folder with your own ``household_system.txt`` and ``household_step.txt``.
            image_format: ``png`` (lossless, default) or ``jpeg``.
            **model_args: model client settings, as for ``mllm-rescue``.

        Raises:
            ParameterError: an argument of the wrong type or a negative count.
        """
        super().__init__(
            prompt_dir, resolution, image_format, {**model_args, "temperature": temperature}
        )
        shown = {"window": window, "history": history, "images": images, "feedback": feedback}
        settings = PromptSettings.from_args(
            {**shown, "resolution": resolution, "image_format": image_format}
            | {"analysis": analysis, "observation": observation, "examples": examples}
        )
        self.reasks = as_count("reasks", reasks)
        self.prompter = HouseholdPrompter(self.prompts, settings)
        self.sensors = frozenset({Sensor.RGB}) if settings.shows_images else frozenset()

    def reset(self, brief: Brief, seed: int) -> None:
        """Start an episode: an empty conversation; templates recorded at the first call."""
        self.prompter.start(brief)
        self.start_episode()

    def act(self, observation: MissionObservation) -> Action:
        """Ask the model for the next subtask; an ``InvalidAction`` if no readable answer comes."""
        if not isinstance(observation, HouseholdObservation):
            raise ParameterError("homiebot plays household missions only")
        messages, step = self.prompter.request(observation)
        reply, answer = self._ask(messages)
        self.note(reply)
        if reply.value is None:
            return InvalidAction(reply.text[-500:], reply.error or "no readable answer")
        self.prompter.remember(step, answer)
        return subtask_of(reply.value)

    def _ask(self, messages: list[Message]) -> tuple[Reply, str]:
        """Ask, re-asking an unreadable answer.

        Return every attempt's text and calls, and the text of the answer used ("" if none).
        """
        texts: list[str] = []
        calls: list[Any] = []
        schema = self.prompter.schema
        for attempt in range(self.reasks + 1):
            reply = self.client.ask(
                messages, schema, parse_answer, revalidate=False, examples=self.prompter.echoes
            )
            texts.append(reply.text)
            calls += reply.calls
            if reply.value is not None:
                return Reply(_attempts_text(texts), tuple(calls), reply.value), reply.text
            error = reply.error or "no answer"
            texts[-1] = f"{reply.text}\n[attempt {attempt + 1} refused: {error}]"
            messages = [*messages, *self._reask(reply.text, error, attempt + 1)]
        texts.append(f"[no readable answer in {self.reasks + 1} attempts: no_answer]")
        return Reply(_attempts_text(texts), tuple(calls), None, error), ""

    def _reask(self, text: str, error: str, number: int) -> list[Message]:
        echo = text if len(text) <= REASK_ECHO else text[:REASK_ECHO] + " [cut]"
        ask = (
            f"Your answer could not be used: {error}. {self.prompter.fields_text()} "
            f"(Re-ask {number} of {self.reasks}.)"
        )
        return [
            {"role": "assistant", "content": echo or "(an empty answer)"},
            {"role": "user", "content": ask},
        ]


def _attempts_text(texts: list[str]) -> str:
    if len(texts) == 1:
        return texts[0]
    return "\n\n".join(f"--- attempt {i + 1} ---\n{text}" for i, text in enumerate(texts))


def subtask_of(answer: BaseModel) -> Subtask:
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
