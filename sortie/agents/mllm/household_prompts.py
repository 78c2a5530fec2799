"""HomieBot's requests and answers: the schema, EMMOE's plain form, and the request builder.

``HouseholdPrompter`` builds what the planner is asked each round (the system prompt, a window
of recent rounds, this round's text and images) with no model server: the ``homiebot`` agent
sends its requests, and ``sortie export sft|dpo`` writes the same requests as training data.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

from pydantic import BaseModel, Field, create_model, field_validator

from sortie.agents.mllm.common import (
    ObservationMode,
    as_flag,
    as_int,
    as_mode,
    objects_text,
    plain_content,
)
from sortie.agents.mllm.prompts import Prompts
from sortie.core.errors import ParameterError
from sortie.core.observation import Brief
from sortie.missions.household.observation import VIEW_NAMES, HouseholdObservation
from sortie.missions.household.records import MAX_ROUNDS, RoundRecord, Verb, history_line
from sortie.models.images import image_part
from sortie.models.structured import extract_json

Message = dict[str, Any]
_SUBTASK = re.compile(r"subtask\s*:\s*\[([^\]]*)\]", re.I)
_SKILL = re.compile(r"(?:model|skill)\s*:\s*\[?([^\]\n]*)", re.I)
_ANALYSIS = re.compile(r"analysis\s*:\s*(.*?)\s*(?=subtask\s*:|\Z)", re.I | re.S)
_PLAIN_FORM = "Analysis: ... Subtask: [Action, target] or [Put, item, place] Model: skill"
SEEN_EXAMPLE = "The red mug is on the counter right in front of me."
HOLDING_EXAMPLE = "I hold the red mug and the table is next to me."
EXAMPLE_SENTENCES = frozenset({SEEN_EXAMPLE, HOLDING_EXAMPLE})
"""The example answers' analyses: an answer that repeats one copied the prompt (an echo)."""
_NAME = re.compile(r"\b[a-z]+(?:_[a-z]+)*_\d+\b")
"""An object's, furniture's or room's name in the scene (``tv_stand_0``)."""


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


@dataclass(frozen=True, slots=True)
class PromptSettings:
    """What shapes a request: the ablation arguments of ``homiebot`` (see the agent)."""

    resolution: int = 256
    image_format: str = "png"
    window: int = 3
    history: int = MAX_ROUNDS
    images: bool = True
    feedback: bool = True
    analysis: bool = True
    mode: ObservationMode = ObservationMode.IMAGES
    examples: int = 0
    """In-context example rounds before the conversation (``household_examples.json``)."""

    @classmethod
    def from_args(cls, args: Mapping[str, Any]) -> PromptSettings:
        """Return the settings named in agent arguments (strings from the command line).

        Arguments that do not shape requests (the model, the temperature) are ignored.

        Raises:
            ParameterError: an argument of the wrong type or a negative count.
        """
        defaults = cls()
        value = {k: args.get(k, getattr(defaults, k)) for k in ("window", "history")}
        return cls(
            as_int("resolution", args.get("resolution", defaults.resolution)),
            str(args.get("image_format", defaults.image_format)),
            as_count("window", value["window"]),
            as_count("history", value["history"]),
            as_flag("images", args.get("images", True)),
            as_flag("feedback", args.get("feedback", True)),
            as_flag("analysis", args.get("analysis", True)),
            as_mode(args.get("observation", ObservationMode.IMAGES)),
            as_count("examples", args.get("examples", 0)),
        )

    @property
    def shows_images(self) -> bool:
        """Return whether the requests carry the four images."""
        return self.images and self.mode is ObservationMode.IMAGES


class HouseholdPrompter:
    """Builds each round's request and keeps the window of recent rounds (text and answers)."""

    def __init__(self, prompts: Prompts, settings: PromptSettings) -> None:
        self.prompts, self.settings = prompts, settings
        self.schema = answer_schema(settings.analysis)
        self.start(Brief("household", "", ""))

    def start(self, brief: Brief) -> None:
        """Begin an episode of ``brief``: an empty window."""
        self.brief = brief
        self.echoes = EXAMPLE_SENTENCES
        """Sentences an answer of this round copies from the prompt if it repeats one."""
        self.turns: deque[tuple[Message, str]] = deque(maxlen=self.settings.window)

    def request(self, observation: HouseholdObservation) -> tuple[list[Message], Message]:
        """Return the messages of this round's request, and the round's own user message.

        With ``examples``, that many expert rounds of other (train) tasks come first, each a
        user message and the answer, never a round of the task being played.
        """
        step = {"role": "user", "content": self._content(observation)}
        shown = examples_for(observation.task or self.brief.text, self.settings.examples)
        self.echoes = EXAMPLE_SENTENCES | copied_analyses(shown, step)
        return [self.system(), *shown, *self._window(), step], step

    def remember(self, step: Message, answer: str) -> None:
        """Keep a round (its text, not its images) and the answer used, for later requests."""
        self.turns.append((_without_images(step), answer))

    def system(self) -> Message:
        """Return the system message: the offered actions and skills, the answer's fields."""
        actions = ", ".join(self.brief.actions or [v.value for v in Verb])
        skills = "\n".join(f"- {name}: {role}" for name, role in self.brief.skills)
        text = self.prompts.render(
            "household_system.txt",
            actions=actions,
            skills=skills or "- (none offered)",
            fields=self.fields_text(),
        )
        return {"role": "system", "content": text}

    def fields_text(self) -> str:
        """Return the sentence that says how to answer: the fields, and two real answers.

        The examples are concrete and valid (a weak model copies what it is shown: with
        placeholders it answered ``...`` every round); they are examples of the form, not
        advice for the task at hand.
        """
        analysis = self.settings.analysis
        pick = _example(analysis, SEEN_EXAMPLE, ("pick", "red mug", None), "grasp")
        put = _example(analysis, HOLDING_EXAMPLE, ("put", "red mug", "table"), "grasp")
        fields = ("analysis (what you see and why), " if analysis else "") + (
            "subtask (action, target, and for put the place, else null) and skill"
        )
        return (
            f"Answer with one JSON object with the fields {fields}. For example: {pick} "
            f'Or, to put down what you hold: {put} To finish: {{"subtask": {{"action": '
            f'"end", "target": "", "place": null}}, "skill": ""}}. The plain form '
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
        if self.settings.shows_images:
            for name, frames in zip(VIEW_NAMES, observation.views, strict=False):
                if frames.rgb is not None:
                    image = image_part(frames.rgb, self.settings.resolution, self.image_format)
                    parts += [{"type": "text", "text": f"{name}:"}, image]
        return plain_content(parts)

    @property
    def image_format(self) -> str:
        """Return the images' encoding (``png`` or ``jpeg``)."""
        return self.settings.image_format

    def _history_text(self, history: tuple[Any, ...]) -> str:
        count = self.settings.history
        if count == 0:
            return "(not shown)"
        lines = [history_line(r) for r in history[-count:] if isinstance(r, RoundRecord)]
        return "\n".join(lines) or "(nothing yet)"

    def _feedback_text(self, observation: HouseholdObservation) -> str:
        if not self.settings.feedback:
            return ""
        code = f" (error {observation.code})" if observation.code else ""
        return f"Feedback on the last subtask: {observation.feedback or 'none yet'}{code}"

    def _views_text(self, observation: HouseholdObservation) -> str:
        if self.settings.mode is ObservationMode.TEXT:
            lines = [
                f"- {name}: {objects_text(names)}"
                for name, names in zip(VIEW_NAMES, observation.detections, strict=False)
            ]
            return "What the head camera sees, per view:\n" + "\n".join(lines)
        if self.settings.shows_images:
            return f"The head camera's four views follow: {', '.join(VIEW_NAMES)}."
        return ""

    def _window(self) -> list[Message]:
        return [
            message
            for step, answer in self.turns
            for message in (step, {"role": "assistant", "content": answer})
        ]


EXAMPLES_FILE = "household_examples.json"
"""Expert rounds of train tasks, packaged beside the prompts (``export.household.examples``)."""
EXAMPLE_NOTE = "(An example round of another task, with the expert's answer.)"


def examples_for(task: str, count: int) -> list[Message]:
    """Return ``count`` example rounds as user and assistant messages, none of ``task``.

    Raises:
        ParameterError: more examples asked for than there are of other tasks.
    """
    if count == 0:
        return []
    rounds = [r for r in _packaged_examples() if r["task"].strip() != task.strip()]
    if count > len(rounds):
        raise ParameterError(f"agent argument examples: at most {len(rounds)}, got {count}")
    return [
        message
        for r in rounds[:count]
        for message in (
            {"role": "user", "content": f"{EXAMPLE_NOTE}\n{r['request']}"},
            {"role": "assistant", "content": r["answer"]},
        )
    ]


def copied_analyses(shown: list[Message], step: Message) -> frozenset[str]:
    """Return the analyses of the example rounds ``shown`` that an answer to ``step`` copies.

    An example's analysis names the example's objects (``go to the tv_stand_0``); an answer
    repeating it word for word while this round's text names none of them took the names
    from the example, not from its own round (an echo). One whose names this round shows, or
    that names none (``Every part of the task is done, so I end.``), may be the model's own.
    """
    seen = set(_NAME.findall(" ".join(_texts(step["content"]))))
    analyses = {_analysis(m["content"]) for m in shown if m.get("role") == "assistant"}
    return frozenset(a for a in analyses if a and not set(_NAME.findall(a)) <= seen)


def _texts(content: str | list[Message]) -> list[str]:
    if isinstance(content, str):
        return [content]
    return [part.get("text", "") for part in content if isinstance(part, dict)]


def _analysis(answer: str) -> str:
    """Return the analysis of an example answer (JSON), or "" if it has none."""
    try:
        data = json.loads(answer)
    except ValueError:
        return ""
    analysis = data.get("analysis") if isinstance(data, dict) else None
    return analysis if isinstance(analysis, str) else ""


@cache
def _packaged_examples() -> list[dict[str, str]]:
    text = (files("sortie.agents.mllm") / "prompts" / EXAMPLES_FILE).read_text("utf-8")
    return list(json.loads(text))


def _example(analysis: bool, seen: str, subtask: tuple[str, str, str | None], skill: str) -> str:
    """Return one answer in the JSON form, as a model should write it."""
    action, target, place = subtask
    data: dict[str, Any] = {"analysis": seen} if analysis else {}
    data |= {"subtask": {"action": action, "target": target, "place": place}, "skill": skill}
    return json.dumps(data)


def as_count(name: str, raw: int | str) -> int:
    """Return an agent argument as a count (an int of at least 0)."""
    value = as_int(name, raw)
    if value < 0:
        raise ParameterError(f"agent argument {name}: expected 0 or more, got {value}")
    return value


def _without_images(step: Message) -> Message:
    """Return a round's request as kept in the conversation: its text, not its images."""
    content = step["content"]
    if isinstance(content, str):
        return step
    text = content[0]["text"]
    return {"role": "user", "content": f"{text}\n(the images of this round are not sent again)"}
