"""A household run's planner rounds, each with the request the planner was (or would be) sent.

The request is rebuilt by HomieBot's own ``HouseholdPrompter`` from the replayed observation,
so a training sample is exactly what the planner sees at evaluation. For a ``homiebot`` run
the prompts recorded in the run and its arguments are used, and the answer is the model's
own accepted answer. For any other agent (the oracle: the expert) the default arguments are
used and the answer is written from the round record: its subtask and skill, and an analysis
sentence made from a template (EMMOE's analyses were written by people; sortie's expert has
none to give). ``-a`` arguments override either (``observation=text`` for a text-only set).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from sortie.agents.household.oracle import HouseholdOracle
from sortie.agents.mllm.common import objects_text
from sortie.agents.mllm.household_prompts import (
    HouseholdPrompter,
    Message,
    PromptSettings,
    parse_answer,
)
from sortie.agents.mllm.prompts import HEADER, Prompts, recover, without_templates
from sortie.core.records import Outcome, StepRecord
from sortie.core.trajectory import Trajectory
from sortie.export.replay import ReplayedStep, replay
from sortie.export.source import StoredRun
from sortie.missions.household.observation import HouseholdObservation
from sortie.missions.household.records import RoundRecord, RoundStatus, Verb
from sortie.missions.household.spec import household_task
from sortie.missions.household.vocabulary import round_of
from sortie.run.store import StoredEpisode

HOMIEBOT = "homiebot"
TEMPLATES = ("household_system.txt", "household_step.txt")
_ATTEMPT = "--- attempt "


@dataclass(frozen=True, slots=True)
class PlannedRound:
    """One planner round: the request, the answer that was acted on, and how it went."""

    episode_id: str
    key: str
    record: RoundRecord
    messages: list[Message]
    """The request in the OpenAI chat form (images as data URLs)."""
    answer: dict[str, Any] | None
    """``{analysis, subtask: {action, target, place}, skill}``; None: no readable answer."""
    episode_success: bool
    skills: tuple[tuple[str, str], ...]
    """The (name, role) of each skill offered in the episode."""
    large: bool
    """Whether the round's target is furniture or a room (not an item)."""
    task: str = ""
    """The instruction as the request shows it."""
    lost: bool = False
    """Whether the round was lost: its subtask failed, or repeated the one just carried out."""
    correction: dict[str, Any] | None = None
    """For a lost round of a planner other than the expert: the expert's answer from the
    state the planner had reached (the oracle labels the visited state, as in DAgger); None
    when the expert has no plan from there."""

    @property
    def answer_text(self) -> str:
        """Return the answer as one JSON object (the form the planner is asked for)."""
        return answer_json(self.answer)


def answer_json(answer: dict[str, Any] | None) -> str:
    """Return an answer as the one JSON object a planner is asked for."""
    return json.dumps(answer, ensure_ascii=False)


def planned_rounds(
    run: StoredRun, overrides: Mapping[str, Any]
) -> Iterator[tuple[PromptSettings, PlannedRound]]:
    """Yield every round of the run's played episodes with the settings its request used.

    Raises:
        ParameterError: an override of the wrong type.
        ConfigError: a record that does not replay as stored.
    """
    for episode, trajectory in run.scored():
        agent = trajectory.header.agent
        own = agent.args if agent.name == HOMIEBOT else {}
        settings = PromptSettings.from_args({**own, **overrides})
        for planned in _episode_rounds(run, episode, trajectory, settings):
            yield settings, planned


def _episode_rounds(
    run: StoredRun, episode: StoredEpisode, trajectory: Trajectory, settings: PromptSettings
) -> Iterator[PlannedRound]:
    """Yield one episode's rounds, rebuilding each request as the planner's window grew."""
    prompter = HouseholdPrompter(_prompts(trajectory), settings)
    sensors = ["rgb"] if settings.shows_images else []
    success = trajectory.footer.outcome is Outcome.SUCCESS
    objects = {
        name: entry.model_dump(mode="json")
        for name, entry in household_task(trajectory.header.episode).objects.items()
    }
    name = trajectory.header.agent.name
    expert: HouseholdOracle | None = None
    previous: RoundRecord | None = None
    for index, replayed in enumerate(replay(trajectory, episode.record, run.config, sensors)):
        if index == 0:
            prompter.start(replayed.brief)
            expert = _expert(name, replayed)
        record = round_of(replayed.record)
        observation = replayed.observation
        if record is None or not isinstance(observation, HouseholdObservation):
            continue
        messages, step = prompter.request(observation)
        answer, said = _answer(name, replayed.record, record, settings, objects)
        if said is not None:
            prompter.remember(step, said)
        lost = _lost(record, previous)
        previous = record
        correction = None
        if lost and expert is not None:
            correction = _expert_choice(expert, observation, settings.analysis, objects)
        role = objects.get(record.target_object or "", {}).get("role", "receptacle")
        yield PlannedRound(
            episode.episode_id,
            episode.key,
            record,
            messages,
            answer,
            success,
            replayed.brief.skills,
            role != "item",
            observation.task or replayed.brief.text,
            lost,
            correction,
        )


def _expert(agent: str, replayed: ReplayedStep) -> HouseholdOracle | None:
    """Return the expert, following a planner's episode from its start.

    None for the expert's own run, or a replay without a privileged view.
    """
    if agent == "oracle" or replayed.oracle is None:
        return None
    return HouseholdOracle(replayed.oracle, replayed.brief)


def _lost(record: RoundRecord, previous: RoundRecord | None) -> bool:
    """Return whether a round failed, or repeated the subtask that had just been carried out."""
    if record.failed:
        return True
    if previous is None or not previous.succeeded or record.verb is None:
        return False
    here = (record.verb, record.target_object, record.place_object)
    return here == (previous.verb, previous.target_object, previous.place_object)


def _expert_choice(
    expert: HouseholdOracle,
    observation: HouseholdObservation,
    analysis: bool,
    roles: Mapping[str, Any],
) -> dict[str, Any] | None:
    """Return the expert's answer from the state ``observation`` shows (None: no plan)."""
    step = expert.plan(observation)
    if step is None:
        return None
    answer = {
        "subtask": {"action": step.action, "target": step.target, "place": step.place},
        "skill": step.skill,
    }
    if not analysis:
        return answer
    held = list(observation.inventory)
    text = analysis_text(held, step.action, step.target, step.place, step.place, roles)
    return {"analysis": text} | answer


def _prompts(trajectory: Trajectory) -> Prompts:
    """Return the templates the run used (recorded at its first step), else the packaged ones."""
    first = trajectory.steps[0].agent_output if trajectory.steps else None
    if trajectory.header.agent.name == HOMIEBOT and first and first.startswith(HEADER):
        texts = recover(first)
        if all(name in texts for name in TEMPLATES):
            return Prompts({name: texts[name] for name in TEMPLATES}, "record")
    return Prompts.load(TEMPLATES)


def _answer(
    agent: str,
    step: StepRecord,
    record: RoundRecord,
    settings: PromptSettings,
    roles: Mapping[str, Any],
) -> tuple[dict[str, Any] | None, str | None]:
    """Return the round's answer as data and the text the planner's window kept (None: none)."""
    if agent == HOMIEBOT:
        text = _accepted_text(step.agent_output or "")
        if text is None:
            return None, None
        try:
            data = parse_answer(text)
        except ValueError:
            return None, None
        return _canonical(data, settings.analysis), text
    answer = _expert_answer(record, settings.analysis, roles)
    return answer, answer_json(answer)


def _accepted_text(output: str) -> str | None:
    """Return the text of the answer a homiebot round acted on (None: it had none)."""
    text = without_templates(output)
    if _ATTEMPT in text:
        text = text.rsplit(_ATTEMPT, 1)[1].split("\n", 1)[-1]
    if text.startswith("[no readable answer") or text.endswith(" [cut]"):
        return None
    return text


def _canonical(data: Any, analysis: bool) -> dict[str, Any] | None:
    """Return a parsed answer in the schema's shape, or None if it does not have it."""
    if not isinstance(data, dict) or not isinstance(data.get("subtask"), dict):
        return None
    planned = data["subtask"]
    answer = {
        "subtask": {
            "action": str(planned.get("action", "")),
            "target": str(planned.get("target") or ""),
            "place": planned.get("place") or None,
        },
        "skill": str(data.get("skill") or ""),
    }
    return {"analysis": str(data.get("analysis", ""))} | answer if analysis else answer


def _expert_answer(record: RoundRecord, analysis: bool, roles: Mapping[str, Any]) -> dict[str, Any]:
    answer = {
        "subtask": {"action": record.action, "target": record.target, "place": record.place},
        "skill": record.skill,
    }
    return {"analysis": expert_analysis(record, roles)} | answer if analysis else answer


def expert_analysis(record: RoundRecord, roles: Mapping[str, Any]) -> str:
    """Return the templated analysis of an expert round: what is held, what comes next.

    ``roles`` is the task's objects (their roles say whether a put goes in or on the place).
    """
    held = _held_before(record)
    if record.verb is Verb.END:
        return analysis_text(held, Verb.END.value, "", None, None, roles)
    place, item = record.place, record.place_object
    return analysis_text(held, record.action, record.target, place, item, roles)


def analysis_text(
    held: list[str],
    action: str,
    target: str,
    place: str | None,
    place_object: str | None,
    roles: Mapping[str, Any],
) -> str:
    """Return the templated analysis of an expert's subtask: what is held, what comes next."""
    if action == Verb.END.value:
        return "Every part of the task is done, so I end."
    where = ""
    if place:
        inside = roles.get(place_object or "", {}).get("role") == "container"
        where = f" {'in' if inside else 'on'} the {place}"
    return (
        f"I hold {objects_text(held)}. The next step towards the task is "
        f"to {action.replace('_', ' ')} the {target}{where}."
    )


def _held_before(record: RoundRecord) -> list[str]:
    """Return what the robot held before the round (from what it holds after it)."""
    item = record.target_object
    if record.status is not RoundStatus.SUCCESS or item is None:
        return list(record.inventory)
    if record.verb is Verb.PICK:
        return [name for name in record.inventory if name != item]
    if record.verb is Verb.PUT:
        return [*record.inventory, item]
    return list(record.inventory)
